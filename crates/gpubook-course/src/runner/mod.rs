//! Grading one exercise the way `cargo test -p exercises --test T -- --exact F` would, minus the
//! noise: get the test binary of the exercise's chapter (fast when only a kernel changed), run the
//! one test with a folder for the grader's report, read the typed report, and record it. `check`
//! and `watch` grade through here; this is the only writer of results into the progress record.
//! What the test printed is shown to the learner, never read for the result.

mod course;
mod testbin;

pub use course::Course;
pub use testbin::newest_input;

use crate::catalog::Exercise;
use crate::grade::GradeReport;
use crate::progress::{self, Progress};
use anyhow::Context;
use std::path::Path;
use std::process::{Command, Stdio};
use testbin::Build;

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
            "exercises/tests/{}.rs ran no grader for {}: that file should be one `gpubook_course::graded!` line per \
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
