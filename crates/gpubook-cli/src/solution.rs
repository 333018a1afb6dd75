//! `gpubook solution [ID]`: the book's answer, once the exercise has passed (or with --force).
//! The lines the learner had to write are highlighted; the stub markers are left out.

use super::style::{BOLD, DIM, OK, cmd, paint};
use anyhow::Context;
use gpubook_course::runner::Course;
use std::fmt::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The exercise (default: the first one not passed yet).
    id: Option<String>,
    /// Show it even though the exercise has not passed yet.
    #[arg(long)]
    force: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let course = Course::load()?;
    let ex = course.find(a.id.as_deref())?;
    if !course.done(&ex.id) && !a.force {
        anstream::println!(
            "{} has not passed yet: working it out is the lesson.\nStuck? {} gives one more hint; {} shows the answer anyway.",
            paint(BOLD, &ex.id),
            cmd(format_args!("gpubook hint {}", ex.id)),
            cmd(format_args!("gpubook solution {} --force", ex.id))
        );
        return Ok(ExitCode::FAILURE);
    }
    for file in &ex.files {
        let path = course.root.join("solutions").join(file);
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        anstream::println!("{}", paint(DIM, format_args!("── solutions/{file} ──")));
        anstream::println!("{}", view(&text));
    }
    anstream::println!("{}", paint(DIM, "(highlighted: the lines the exercise asked for)"));
    Ok(ExitCode::SUCCESS)
}

/// A solution file as a learner should read it: the markers of src/stubs.rs and the book's
/// ANCHOR lines left out, the stub's text dropped, the answer's lines highlighted.
fn view(solution: &str) -> String {
    let mut out = String::new();
    let (mut in_answer, mut in_stub) = (false, false);
    for line in solution.lines() {
        match line.trim() {
            "// SOLUTION" => in_answer = true,
            "// STUB" => in_stub = true,
            "// END SOLUTION" => (in_answer, in_stub) = (false, false),
            t if t.starts_with("// ANCHOR") => {}
            _ if in_stub => {}
            _ if in_answer => {
                let _ = writeln!(out, "{}", paint(OK, line));
            }
            _ => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_drops_markers_and_stubs_and_highlights_the_answer() {
        let sol = "// ANCHOR: k\nvoid k() {\n    // SOLUTION\n    x = 1;\n    // STUB\n    // // TODO\n    // END SOLUTION\n}\n// ANCHOR_END: k\n";
        let v = view(sol);
        assert_eq!(anstream::adapter::strip_str(&v).to_string(), "void k() {\n    x = 1;\n}\n");
        assert!(v.contains(&paint(OK, "    x = 1;")));
    }
}
