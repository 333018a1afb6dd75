//! Grading one exercise the way `cargo test -p exercises --test T -- --exact F` would, minus the
//! noise: get the test binary (fast when only a kernel changed), run the one test, and turn what
//! it printed into an outcome. `check` and `watch` both grade through here.

use super::libtest::{self, Verdict};
use super::style::{BAD, BOLD, DIM, OK, cmd, code_spans, paint};
use super::testbin::{self, Build};
use anyhow::Context;
use gpubook::catalog::Exercise;
use gpubook::grade::{Progress, Status};
use std::fmt::Write;
use std::path::Path;
use std::process::{Command, Stdio};

pub enum Outcome {
    Passed,
    /// The grader's report, and what the learner's code printed on the way.
    Failed {
        report: String,
        printed: String,
    },
    /// cargo's diagnostics: the grader never ran.
    DoesNotCompile(String),
    /// The test could not run or finish (a missing test, a crash that escaped the grader).
    Broken(String),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }
}

/// Grades `ex`; `progress` hears each step (for a spinner or a status line).
pub fn grade(root: &Path, ex: &Exercise, progress: &mut dyn FnMut(String)) -> anyhow::Result<Outcome> {
    let exe = match testbin::build(root, &ex.test, progress)? {
        Build::Ready(exe) => exe,
        Build::Failed(diagnostics) => {
            // The grader records its own runs; one that could not start is recorded here.
            record_failing(root, &ex.id);
            return Ok(Outcome::DoesNotCompile(diagnostics));
        }
    };
    progress(format!("grading {}", ex.id));
    let out = Command::new(&exe)
        .args([ex.function.as_str(), "--exact", "--test-threads=1", "--color=never"])
        // A backtrace would bury the report; the grader's progress file must be this checkout's.
        .env("RUST_BACKTRACE", "0")
        .env("GPUBOOK_ROOT", root)
        .current_dir(root.join("exercises"))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running the test binary {}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(match libtest::parse(&ex.function, &stdout) {
        Verdict::Passed => Outcome::Passed,
        Verdict::Failed { report, printed } if report.is_empty() => {
            Outcome::Broken(format!("the test failed without a report:\n{printed}"))
        }
        Verdict::Failed { report, printed } => Outcome::Failed { report, printed },
        Verdict::NotFound => Outcome::Broken(format!(
            "exercises/tests/{}.rs has no test `{}`: the grader was never called.\n\
             That file should be one line per exercise; `git checkout exercises/tests/{}.rs` restores it.",
            ex.test, ex.function, ex.test
        )),
        Verdict::Stopped { printed } => {
            record_failing(root, &ex.id);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = stderr.lines().collect();
            let tail = lines[lines.len().saturating_sub(20)..].join("\n");
            let mut why = format!(
                "the test process stopped before the grader finished ({}): something ended the \
                 whole process (process::exit, abort, a crash) where the grader could not catch it.",
                out.status
            );
            for part in [printed.trim(), tail.trim()] {
                if !part.is_empty() {
                    why = format!("{why}\n{part}");
                }
            }
            Outcome::Broken(why)
        }
    })
}

fn record_failing(root: &Path, id: &str) {
    let recorded = Progress::update(root, id, |e| {
        e.attempts += 1;
        if e.status != Status::Passed {
            e.status = Status::Failing;
        }
    });
    if let Err(e) = recorded {
        eprintln!("warning: could not record progress in {}: {e}", Progress::path(root).display());
    }
}

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
