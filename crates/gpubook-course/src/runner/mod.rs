//! Grading one exercise the way `cargo test -p exercises --test T -- --exact F` would, minus the
//! noise: get the test binary of the exercise's chapter (fast when only a kernel changed), run the
//! one test with a folder for the grader's report, read the typed report, and record it. `check`
//! and `watch` grade through here; this is the only writer of results into the progress record.
//! What the test printed is shown to the learner, never read for the result.

mod child;
mod course;
mod testbin;

pub use course::Course;
pub use testbin::newest_input;

use crate::catalog::Exercise;
use crate::grade::GradeReport;
use crate::progress::{self, Progress};
use anyhow::Context;
use serde::Serialize;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use testbin::Build;

/// How a grade went, as every front end receives it (the book's server sends it as JSON).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub enum Outcome {
    Passed(GradeReport),
    /// The grader's report, and what the learner's code printed on the way.
    Failed {
        report: GradeReport,
        printed: String,
    },
    /// cargo's diagnostics: the grader never ran.
    DoesNotCompile(String),
    /// The test could not run or finish (a missing test, a crash that escaped the grader).
    Broken(String),
    /// The time the front end allowed ran out (cargo or the test was stopped).
    TimedOut {
        seconds: u64,
    },
}

impl Outcome {
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed(_))
    }
}

/// Grades `ex` and records the outcome; `progress` hears each step (for a spinner or a status line).
pub fn grade(root: &Path, ex: &Exercise, progress: &mut dyn FnMut(String)) -> anyhow::Result<Outcome> {
    grade_within(root, ex, None, progress)
}

/// [`grade`], stopped after `limit` (building and grading together): then the outcome is
/// `TimedOut` and nothing is recorded.
pub fn grade_within(root: &Path, ex: &Exercise, limit: Option<Duration>, progress: &mut dyn FnMut(String)) -> anyhow::Result<Outcome> {
    let deadline = limit.map(|l| Instant::now() + l);
    let timed_out = || Outcome::TimedOut { seconds: limit.map_or(0, |l| l.as_secs()) };
    // Taken before anything runs: an edit made during the run leaves the pass stale.
    let fingerprint = progress::fingerprint(root, ex);
    let exe = match testbin::build(root, &ex.test, deadline, progress)? {
        Build::Ready(exe) => exe,
        Build::Failed(diagnostics) => {
            record_failing(root, &ex.id);
            return Ok(Outcome::DoesNotCompile(diagnostics));
        }
        Build::TimedOut => return Ok(timed_out()),
    };
    progress(format!("grading {}", ex.id));
    let reports = root.join(".gpubook").join("reports");
    match std::fs::remove_file(GradeReport::path(&reports, &ex.id)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing the last report from {}", reports.display()));
        }
        _ => {}
    }
    let mut cmd = Command::new(&exe);
    cmd.args([ex.function.as_str(), "--exact", "--test-threads=1", "--nocapture", "--color=never"])
        // A backtrace would bury the message of a grader that could not run.
        .env("RUST_BACKTRACE", "0")
        .env("GPUBOOK_ROOT", root)
        .env(GradeReport::DIR_VAR, &reports)
        .current_dir(root.join("exercises"));
    let mut stdout = String::new();
    let ended = child::run(&mut cmd, deadline, &mut |line| {
        stdout.push_str(line);
        stdout.push('\n');
    })
    .with_context(|| format!("running the test binary {}", exe.display()))?;
    let Some(status) = ended.status else { return Ok(timed_out()) };
    let printed = printed_by_the_code(&stdout, &ex.function);
    let Some(report) = GradeReport::read(&reports, &ex.id)? else {
        record_failing(root, &ex.id);
        return Ok(Outcome::Broken(no_report(ex, status, &ended.stderr, &printed)));
    };
    if let Err(e) = Progress::record(root, &report, &fingerprint) {
        eprintln!("warning: could not record progress in {}: {e}", Progress::path(root).display());
    }
    Ok(if report.passed { Outcome::Passed(report) } else { Outcome::Failed { report, printed } })
}

/// Why there is no report: the test is not there, or its process ended before the grader did.
fn no_report(ex: &Exercise, status: std::process::ExitStatus, stderr: &str, printed: &str) -> String {
    if status.success() {
        return format!(
            "exercises/tests/{}.rs ran no grader for {}: that file should be one `gpubook_course::graded!` line per \
             exercise; `git checkout exercises/tests/{}.rs` restores it.",
            ex.test, ex.id, ex.test
        );
    }
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("note: run with `RUST_BACKTRACE")).collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    let mut why = format!(
        "the test process stopped before the grader finished ({}): something ended the whole \
         process (process::exit, abort, a crash) or the grader could not start.",
        status
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
