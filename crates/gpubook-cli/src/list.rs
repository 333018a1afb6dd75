//! `gpubook list`: every exercise by chapter, with what the progress record says about it.

use super::style::{BAD, BOLD, DIM, OK, WARN, cmd, paint};
use gpubook_course::progress::Standing;
use gpubook_course::runner::Course;
use std::fmt::Write;
use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    let course = Course::load()?;
    anstream::print!("{}", render(&course, course.current().map(|e| e.id.as_str()), "next"));
    anstream::println!("\n{}", summary(&course));
    Ok(ExitCode::SUCCESS)
}

/// The list, with `marked` (the exercise to do) pointed at and labelled `label`.
pub fn render(course: &Course, marked: Option<&str>, label: &str) -> String {
    let mut out = String::new();
    for chapter in &course.catalog.chapters {
        let exercises: Vec<_> = course.catalog.exercises.iter().filter(|e| e.chapter == chapter.number).collect();
        let heading = format!("Chapter {} · {}", chapter.number, chapter.title);
        if exercises.is_empty() {
            // Reading-only chapters stay in the list so the course's shape shows.
            let _ = writeln!(out, "{}", paint(DIM, heading));
            continue;
        }
        let _ = writeln!(out, "{}", paint(BOLD, heading));
        let width = exercises.iter().map(|e| e.id.len()).max().unwrap_or(0);
        for e in exercises {
            let standing = course.standing(&e.id);
            let mark = match standing {
                Standing::Passed => paint(OK, "✓"),
                Standing::Stale => paint(WARN, "~"),
                Standing::Failing => paint(BAD, "✗"),
                Standing::NotStarted => paint(DIM, "·"),
            };
            let stale = if standing == Standing::Stale { paint(DIM, " (changed since it passed: check it again)") } else { String::new() };
            let pointer = if marked == Some(e.id.as_str()) { paint(WARN, format_args!("  ← {label}")) } else { String::new() };
            let _ = writeln!(out, "  {mark} {:<width$}  {}{stale}{pointer}", e.id, e.title);
        }
    }
    out
}

/// `[██████░░░░░░░░] 3/12 passed, 1 failing`.
pub fn summary(course: &Course) -> String {
    const WIDTH: usize = 24;
    let total = course.catalog.exercises.len();
    let count = |s: Standing| course.catalog.exercises.iter().filter(|e| course.standing(&e.id) == s).count();
    let (passed, failing, stale) = (count(Standing::Passed), count(Standing::Failing), count(Standing::Stale));
    let filled = (passed * WIDTH).checked_div(total).unwrap_or(0);
    let bar = format!("{}{}", paint(OK, "█".repeat(filled)), paint(DIM, "░".repeat(WIDTH - filled)));
    let mut line = format!("[{bar}] {passed}/{total} passed");
    if failing > 0 {
        let _ = write!(line, ", {failing} failing");
    }
    if stale > 0 {
        let _ = write!(line, ", {stale} changed since passing");
    }
    if total > 0 && passed == total {
        let _ = write!(line, " · {}", paint(OK, "the whole course is done!"));
    }
    line
}

/// What `gpubook` with no command ends with: the next exercise and how to start on it.
pub fn next_steps(course: &Course) -> String {
    match course.current() {
        Some(e) => format!(
            "Next: {} ({}): edit {}\n      then {} to grade it, or {} to grade on every save\n",
            paint(BOLD, &e.id),
            e.title,
            Course::shown_files(e),
            cmd(format_args!("gpubook check {}", e.id)),
            cmd("gpubook watch")
        ),
        None if course.catalog.exercises.is_empty() => "No exercises yet.\n".to_string(),
        None => format!("{}\n", paint(OK, "Every exercise has passed. Well done!")),
    }
}

#[cfg(test)]
mod tests {
    use gpubook_course::runner::Course;
    fn course(statuses: &[(&str, gpubook_course::progress::Standing)]) -> Course {
        Course::fixture(statuses)
    }
    use super::*;

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn the_list_marks_each_status_and_the_next_exercise() {
        let c = course(&[("ch03-vector-add", Standing::Passed), ("ch03-saxpy", Standing::Failing), ("ch04-reduce", Standing::Stale)]);
        let text = plain(&format!("{}{}", render(&c, Some("ch03-saxpy"), "next"), summary(&c)));
        assert!(text.contains("~ ch04-reduce") && text.contains("changed since it passed"), "{text}");
        assert!(text.contains("1 changed since passing"), "{text}");
        assert!(text.contains("Chapter 3 · SPMD"), "{text}");
        assert!(text.contains("✓ ch03-vector-add"), "{text}");
        assert!(text.contains("✗ ch03-saxpy") && text.contains("ch03-saxpy  ← next"), "{text}");
        assert!(text.contains("1/3 passed, 1 failing"), "{text}");
    }

    #[test]
    fn the_bar_fills_with_passes() {
        let all = [("ch03-vector-add", Standing::Passed), ("ch03-saxpy", Standing::Passed), ("ch04-reduce", Standing::Passed)];
        let text = plain(&summary(&course(&all)));
        assert!(text.starts_with(&format!("[{}]", "█".repeat(24))), "{text}");
        assert!(text.contains("3/3 passed") && text.contains("done"), "{text}");
        assert!(plain(&summary(&course(&[]))).starts_with(&format!("[{}]", "░".repeat(24))));
    }
}
