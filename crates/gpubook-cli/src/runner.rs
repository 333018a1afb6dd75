//! Grading one exercise the way `cargo test -p exercises --test T -- --exact F` would, minus the
//! noise: get the test binary of the exercise's chapter (fast when only a kernel changed), run the
//! one test with a folder for the grader's report, read the typed report, and record it. `check`
//! and `watch` grade through here; this is the only writer of results into the progress record.
//! What the test printed is shown to the learner, never read for the result.

use super::style::{BAD, BOLD, DIM, OK, cmd, code_spans, paint};
use super::testbin::{self, Build};
use anyhow::Context;
use gpubook::catalog::Exercise;
use gpubook::grade::GradeReport;
use gpubook::progress::{self, Progress};
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

/// Grades `ex` and records the outcome; `progress` hears each step (for a spinner or a status line).
pub fn grade(root: &Path, ex: &Exercise, progress: &mut dyn FnMut(String)) -> anyhow::Result<Outcome> {
    // Taken before anything runs: an edit made during the run leaves the pass stale.
    let fingerprint = progress::fingerprint(root, ex);
    let exe = match testbin::build(root, &ex.test, progress)? {
        Build::Ready(exe) => exe,
        Build::Failed(diagnostics) => {
            record_failing(root, &ex.id);
            return Ok(Outcome::DoesNotCompile(diagnostics));
        }
    };
    progress(format!("grading {}", ex.id));
    let reports = root.join(".gpubook").join("reports");
    match std::fs::remove_file(GradeReport::path(&reports, &ex.id)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing the last report from {}", reports.display()));
        }
        _ => {}
    }
    let out = Command::new(&exe)
        .args([ex.function.as_str(), "--exact", "--test-threads=1", "--nocapture", "--color=never"])
        // A backtrace would bury the message of a grader that could not run.
        .env("RUST_BACKTRACE", "0")
        .env("GPUBOOK_ROOT", root)
        .env(GradeReport::DIR_VAR, &reports)
        .current_dir(root.join("exercises"))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running the test binary {}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed = printed_by_the_code(&stdout, &ex.function);
    let Some(report) = GradeReport::read(&reports, &ex.id)? else {
        record_failing(root, &ex.id);
        return Ok(Outcome::Broken(no_report(ex, &out, &printed)));
    };
    if let Err(e) = Progress::record(root, &report, &fingerprint) {
        eprintln!("warning: could not record progress in {}: {e}", Progress::path(root).display());
    }
    Ok(match report.report {
        None if report.passed => Outcome::Passed,
        text => Outcome::Failed { report: text.unwrap_or_default(), printed },
    })
}

/// Why there is no report: the test is not there, or its process ended before the grader did.
fn no_report(ex: &Exercise, out: &std::process::Output, printed: &str) -> String {
    if out.status.success() {
        return format!(
            "exercises/tests/{}.rs ran no grader for {}: that file should be one `gpubook::graded!` line per \
             exercise; `git checkout exercises/tests/{}.rs` restores it.",
            ex.test, ex.id, ex.test
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("note: run with `RUST_BACKTRACE")).collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    let mut why = format!(
        "the test process stopped before the grader finished ({}): something ended the whole \
         process (process::exit, abort, a crash) or the grader could not start.",
        out.status
    );
    for part in [printed.trim(), tail.trim()] {
        if !part.is_empty() {
            why = format!("{why}\n{part}");
        }
    }
    why
}

/// What the learner's code printed (a kernel's printf, a println!): the test's output without
/// libtest's own lines. For the learner's eyes only.
fn printed_by_the_code(stdout: &str, function: &str) -> String {
    let framing = |l: &str| {
        l.trim().is_empty()
            || l.starts_with("running ")
            || l.starts_with("test result: ")
            || l.starts_with(&format!("test {function} ... "))
            || l == "failures:"
            || l == format!("    {function}")
            || l.starts_with("---- ")
            || l.ends_with("is not solved yet")
    };
    stdout.lines().filter(|l| !framing(l)).collect::<Vec<_>>().join("\n")
}

fn record_failing(root: &Path, id: &str) {
    if let Err(e) = Progress::record_failing(root, id) {
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
