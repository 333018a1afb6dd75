//! `gpubook stubs`: regenerate the learner's exercises/ from solutions/, or check it has not drifted.

use gpubook::paths::root as workspace_root;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Only report differences (CI runs this); exit 1 on drift.
    #[arg(long)]
    check: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let root = workspace_root();
    if a.check {
        let drift = gpubook::stubs::drift(&root)?;
        if drift.is_empty() {
            println!("exercises/ matches the stubs generated from solutions/");
            return Ok(ExitCode::SUCCESS);
        }
        for d in &drift {
            println!("drift: {d}");
        }
        println!("run `gpubook stubs` to regenerate exercises/ from solutions/");
        return Ok(ExitCode::FAILURE);
    }
    let n = gpubook::stubs::write(&root, None)?;
    println!("wrote {n} files under exercises/");
    Ok(ExitCode::SUCCESS)
}
