//! What the learner reads about a grade, in the terminal: the runner's typed outcome, coloured.

use super::style::{BAD, BOLD, DIM, OK, cmd, code_spans, paint};
use gpubook_course::catalog::Exercise;
use gpubook_course::runner::Outcome;
use std::fmt::Write;

/// What the learner reads about an outcome.
pub fn render(ex: &Exercise, outcome: &Outcome) -> String {
    let mut out = String::new();
    match outcome {
        Outcome::Passed => {
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
    }
    out
}

/// The grader's report (see gpubook's grade/report.rs) with its first line in red, its labels in
/// bold and code in colour.
fn paint_report(report: &str) -> String {
    const LABELS: [&str; 4] = ["concept:", "input:", "backend:", "next:"];
    let mut out = String::new();
    for line in report.lines() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        if body.starts_with('✗') {
            let _ = writeln!(out, "{}", paint(BAD, line));
        } else if let Some(label) = LABELS.iter().find(|l| body.starts_with(*l)) {
            let _ = writeln!(out, "{indent}{}{}", paint(BOLD, label), code_spans(&body[label.len()..]));
        } else {
            let _ = writeln!(out, "{}", code_spans(line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_painted_report_reads_the_same_without_colour() {
        let report = "✗ x is not solved yet: c[0] was never written\n  concept: one thread per element\n  \
                      - c[0] = NaN\n  next:    `gpubook hint x` for a hint";
        let painted = paint_report(report);
        assert_eq!(anstream::adapter::strip_str(&painted).to_string(), format!("{report}\n"));
    }
}
