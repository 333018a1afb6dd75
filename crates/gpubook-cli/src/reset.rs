//! `gpubook reset ID`: put an exercise's files back as they started (the stubs generated from
//! solutions/), after asking, since the learner's work in them is lost.

use super::style::{BOLD, OK, WARN, paint};
use anyhow::{Context, bail};
use gpubook_course::progress::Progress;
use gpubook_course::runner::Course;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The exercise to reset (required: a reset loses work, so it is never guessed).
    id: String,
    /// Do not ask for confirmation.
    #[arg(long, short)]
    yes: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let course = Course::load()?;
    let ex = course.find(Some(a.id.as_str()))?;
    let files: Vec<String> = ex.files.iter().map(|f| format!("exercises/{f}")).collect();
    if !a.yes {
        anstream::print!(
            "{} {} to its starting stub? Your changes to {} will be lost. [y/N] ",
            paint(WARN, "Reset"),
            paint(BOLD, &ex.id),
            files.join(", ")
        );
        std::io::stdout().flush().context("writing the question")?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer).context("reading the answer")?;
        if !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
            anstream::println!("Nothing changed.");
            return Ok(ExitCode::SUCCESS);
        }
    }
    for file in &ex.files {
        let written = gpubook_course::stubs::write(&course.root, Some(&Path::new("exercises").join(file)))
            .with_context(|| format!("restoring exercises/{file}"))?;
        if written != 1 {
            bail!("there is no stub for exercises/{file}: solutions/{file} is missing");
        }
    }
    // Its pass no longer stands (other exercises in the same files go stale by their fingerprints).
    Progress::record_reset(&course.root, &ex.id)
        .with_context(|| format!("recording the reset in {}", Progress::path(&course.root).display()))?;
    anstream::println!("{} {} is back at its start: {}", paint(OK, "✓"), ex.id, files.join(", "));
    Ok(ExitCode::SUCCESS)
}
