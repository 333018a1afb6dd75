//! What the learner reads about a grade, in the terminal: the runner's typed outcome, coloured.

use super::style::{BAD, BOLD, DIM, OK, cmd, code_spans, paint};
use gpubook_course::catalog::Exercise;
use gpubook_course::grade::GradeReport;
use gpubook_course::runner::Outcome;
use std::fmt::Write;

/// What the learner reads about an outcome.
pub fn render(ex: &Exercise, outcome: &Outcome) -> String {
    let mut out = String::new();
    match outcome {
        Outcome::Passed(_) => {
            let _ = writeln!(out, "{} {}", paint(OK, format_args!("✓ {} passed!", ex.id)), ex.title);
        }
        Outcome::Failed { report, printed } => {
            if !printed.is_empty() {
                // A printf in every thread of a big launch prints thousands of lines: the first
                // few make the point, and the report must stay on screen.
                const SHOWN: usize = 20;
                let _ = writeln!(out, "{}", paint(DIM, "your code printed:"));
                for line in printed.lines().take(SHOWN) {
                    let _ = writeln!(out, "  {line}");
                }
                let more = printed.lines().count().saturating_sub(SHOWN);
                if more > 0 {
                    let _ = writeln!(out, "{}", paint(DIM, format_args!("  … and {more} more lines")));
                }
                out.push('\n');
            }
            out.push_str(&paint_report(report));
        }
        Outcome::DoesNotCompile(diagnostics) => {
            let _ = writeln!(out, "{}\n", paint(BAD, format_args!("✗ {} does not compile yet:", ex.id)));
            out.push_str(diagnostics.trim_end());
            let _ = writeln!(out, "\n\n  next:    {} for a hint", cmd(format_args!("gpubook hint {}", ex.id)));
        }
        Outcome::Broken(why) => {
            let _ = writeln!(out, "{}", paint(BAD, format_args!("✗ {} could not be graded:", ex.id)));
            let _ = writeln!(out, "{}", why.trim_end());
        }
        Outcome::TimedOut { seconds } => {
            let _ = writeln!(out, "{}", paint(BAD, format_args!("✗ {} was stopped after {seconds} s", ex.id)));
        }
    }
    out
}

/// The grader's report, field by field (the same words as its plain text,
/// [`GradeReport::text`]): the first line in red, the labels in bold, code in colour.
fn paint_report(r: &GradeReport) -> String {
    let mut out = String::new();
    let Some(f) = &r.failure else { return out };
    let _ = writeln!(out, "\n{}", paint(BAD, format_args!("✗ {} is not solved yet: {}", r.id, f.what)));
    let label = |out: &mut String, name: &str, text: &str| {
        let _ = writeln!(out, "  {}{}", paint(BOLD, format_args!("{name:<9}")), code_spans(text));
    };
    if let Some(c) = &f.concept {
        label(&mut out, "concept:", c);
    }
    if let Some(i) = &f.input {
        label(&mut out, "input:", i);
    }
    for d in &f.details {
        for (k, line) in d.lines().enumerate() {
            let _ = writeln!(out, "  {} {}", if k == 0 { "-" } else { " " }, code_spans(line));
        }
    }
    label(&mut out, "backend:", &format!("{}; seed {} (GPUBOOK_SEED={} reproduces these inputs)", r.backend, r.seed, r.seed));
    label(&mut out, "next:", &format!("`{}` for a hint", r.hint_command()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook_course::grade::Failure;

    /// The terminal shows the words every other front end shows: the plain text, coloured.
    #[test]
    fn a_painted_report_reads_as_the_plain_text() {
        let report = GradeReport {
            id: "x".into(),
            passed: false,
            failure: Some(
                Failure::new("c[0] was never written").concept("one thread per element").input("n = 1").detail("c[0] = NaN\nsecond line"),
            ),
            test: "ch03".into(),
            function: "f".into(),
            seed: 7,
            backend: "emulator".into(),
            graded_crate: None,
            skipped_checks: Vec::new(),
            took_ms: 1,
        };
        let painted = paint_report(&report);
        assert_ne!(painted, anstream::adapter::strip_str(&painted).to_string(), "coloured");
        assert_eq!(anstream::adapter::strip_str(&painted).to_string(), format!("{}\n", report.text().unwrap()));
    }
}
