//! `gpubook check [ID]`: grade one exercise and show the grader's report, or that it passed;
//! `--all` grades every exercise, one line each.

use super::list;
use super::render::render;
use super::style::{BAD, BOLD, DIM, OK, cmd, paint};
use gpubook_course::runner::Course;
use gpubook_course::runner::{self, Outcome};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// The exercise, e.g. ch03-vector-add or vector-add (default: the first one not passed yet).
    id: Option<String>,
    /// Grade every exercise of the course, in order (and record what each does now).
    #[arg(long, conflicts_with = "id")]
    all: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let mut course = Course::load()?;
    if a.all {
        return all(&mut course);
    }
    if a.id.is_none() && course.current().is_none() && !course.catalog.exercises.is_empty() {
        anstream::println!("{}", paint(OK, "Every exercise has passed: nothing to check."));
        anstream::println!("{} grades one again, {} grades them all.", cmd("gpubook check ID"), cmd("gpubook check --all"));
        return Ok(ExitCode::SUCCESS);
    }
    let ex = course.find(a.id.as_deref())?.clone();
    let started = Instant::now();
    let spinner = spinner(format!("checking {}", ex.id));
    let outcome = runner::grade(&course.root, &ex, &mut |step| spinner.set_message(step));
    spinner.finish_and_clear();
    let outcome = outcome?;
    let took = started.elapsed().as_secs_f64();

    anstream::print!("{}", render(&ex, &outcome));
    anstream::println!("{}", paint(DIM, format_args!("(checked in {took:.2} s)")));
    if let Outcome::Passed(_) = outcome {
        course.reload_progress();
        anstream::println!("\nCompare with the book's answer: {}", cmd(format_args!("gpubook solution {}", ex.id)));
        match course.after(&ex.id) {
            Some(next) => {
                anstream::println!("Next: {} ({}): {}", paint(BOLD, &next.id), next.title, cmd(format_args!("gpubook check {}", next.id)))
            }
            None => anstream::println!("{}", paint(OK, "That was the last open exercise: the whole course is done!")),
        }
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::FAILURE)
}

/// Every exercise, one line each, then the course's summary.
fn all(course: &mut Course) -> anyhow::Result<ExitCode> {
    let exercises = course.catalog.exercises.clone();
    let mut failing = 0;
    for ex in &exercises {
        let spinner = spinner(format!("checking {}", ex.id));
        let outcome = runner::grade(&course.root, ex, &mut |step| spinner.set_message(step));
        spinner.finish_and_clear();
        let line = match outcome? {
            Outcome::Passed(_) => paint(OK, format_args!("✓ {}", ex.id)),
            Outcome::Failed { report, .. } => {
                failing += 1;
                let what = report.failure.as_ref().map_or("", |f| f.what.as_str());
                paint(BAD, format_args!("✗ {} is not solved yet: {what}", ex.id))
            }
            Outcome::DoesNotCompile(_) => {
                failing += 1;
                paint(BAD, format_args!("✗ {} does not compile yet", ex.id))
            }
            Outcome::Broken(_) | Outcome::TimedOut { .. } => {
                failing += 1;
                paint(BAD, format_args!("✗ {} could not be graded", ex.id))
            }
        };
        anstream::println!("{line}");
    }
    course.reload_progress();
    anstream::println!("\n{}", list::summary(course));
    if failing > 0 {
        anstream::println!("{} shows one exercise's whole report.", cmd("gpubook check ID"));
    }
    Ok(if failing == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// A spinner on stderr while cargo and the grader work (indicatif draws nothing when stderr is
/// not a terminal, so pipes and tests see only the report).
fn spinner(message: String) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner().with_message(message);
    bar.enable_steady_tick(Duration::from_millis(80));
    bar
}
