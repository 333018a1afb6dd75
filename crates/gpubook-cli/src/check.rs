//! `gpubook check [ID]`: grade one exercise and show the grader's report, or that it passed.

use super::course::Course;
use super::runner::{self, Outcome};
use super::style::{BOLD, DIM, OK, cmd, paint};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// The exercise, e.g. ch03-vector-add or vector-add (default: the first one not passed yet).
    id: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let mut course = Course::load()?;
    let ex = course.find(a.id.as_deref())?.clone();
    let started = Instant::now();
    let spinner = spinner(format!("checking {}", ex.id));
    let outcome = runner::grade(&course.root, &ex, &mut |step| spinner.set_message(step));
    spinner.finish_and_clear();
    let outcome = outcome?;
    let took = started.elapsed().as_secs_f64();

    anstream::print!("{}", runner::render(&ex, &outcome));
    anstream::println!("{}", paint(DIM, format_args!("(checked in {took:.2} s)")));
    if let Outcome::Passed = outcome {
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

/// A spinner on stderr while cargo and the grader work (indicatif draws nothing when stderr is
/// not a terminal, so pipes and tests see only the report).
fn spinner(message: String) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner().with_message(message);
    bar.enable_steady_tick(Duration::from_millis(80));
    bar
}
