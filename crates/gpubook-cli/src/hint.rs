//! `gpubook hint [ID]`: one more hint each time, from a nudge to nearly the answer. The ones
//! already seen are shown again (dimmed) so the newest reads in context.

use super::style::{BOLD, DIM, WARN, cmd, code_spans, paint};
use anyhow::Context;
use gpubook_course::catalog::Exercise;
use gpubook_course::progress::Progress;
use gpubook_course::runner::Course;
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The exercise (default: the first one not passed yet).
    id: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let course = Course::load()?;
    let ex = course.find(a.id.as_deref())?;
    let again = format!("run `gpubook hint {}` again", ex.id);
    anstream::print!("{}", reveal(&course.root, ex, course.done(&ex.id), &again)?);
    Ok(ExitCode::SUCCESS)
}

/// Records one more hint as shown and renders all shown so far; `again` says how to get the next,
/// `passed` whether the exercise has passed (then its answer needs no --force).
pub fn reveal(root: &Path, ex: &Exercise, passed: bool, again: &str) -> anyhow::Result<String> {
    let (entry, new) = Progress::record_hint(root, &ex.id, ex.hints.len() as u32)
        .with_context(|| format!("recording the hint in {}", Progress::path(root).display()))?;
    Ok(render(ex, entry.hints_shown as usize, new, passed, again))
}

/// The first `shown` hints; the last one highlighted when it is `new`.
fn render(ex: &Exercise, shown: usize, new: bool, passed: bool, again: &str) -> String {
    let total = ex.hints.len();
    let mut out = String::new();
    for (i, hint) in ex.hints.iter().take(shown).enumerate() {
        let label = format!("hint {}/{total}:", i + 1);
        let latest = new && i + 1 == shown;
        if latest {
            let _ = writeln!(out, "{} {}", paint(WARN, label), code_spans(hint));
        } else {
            let _ = writeln!(out, "{}", paint(DIM, format_args!("{label} {hint}")));
        }
    }
    if !new {
        let _ = writeln!(out, "\n{} that was the last of {total}.", paint(BOLD, "No more hints:"));
        if !ex.concepts.is_empty() {
            let _ = writeln!(out, "It is about {}: the chapter explains each.", ex.concepts.join(", "));
        }
        if passed {
            let _ = writeln!(out, "It has passed: compare with the book's answer, {}", cmd(format_args!("gpubook solution {}", ex.id)));
        } else {
            let _ = writeln!(out, "Still stuck? The answer: {}", cmd(format_args!("gpubook solution {} --force", ex.id)));
        }
    } else if shown < total {
        let more = total - shown;
        let _ = writeln!(out, "{}", paint(DIM, format_args!("({more} more: {again})")));
    }
    out
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
    fn hints_come_one_at_a_time_then_run_out() {
        let c = course(&[]);
        let ex = c.find(Some("saxpy")).unwrap();
        let first = plain(&render(ex, 1, true, false, "again"));
        assert!(first.contains("hint 1/2: h1") && !first.contains("h2") && first.contains("1 more"), "{first}");
        let second = plain(&render(ex, 2, true, false, "again"));
        assert!(second.contains("hint 1/2: h1") && second.contains("hint 2/2: h2") && !second.contains("more"), "{second}");
        let out = plain(&render(ex, 2, false, false, "again"));
        assert!(out.contains("No more hints") && out.contains("gpubook solution ch03-saxpy --force"), "{out}");
        let passed = plain(&render(ex, 2, false, true, "again"));
        assert!(passed.contains("gpubook solution ch03-saxpy") && !passed.contains("--force"), "{passed}");
    }
}
