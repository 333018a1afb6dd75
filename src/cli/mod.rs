//! Command-line front end. One module per command; each returns `anyhow::Result` so every
//! failure reaches the learner as one readable message, never a panic.

mod bench;
mod doctor;
mod pipeline;
mod status;
mod stubs;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "gpubook", version, about = "GPU programming in Rust: the book's runner, on a GPU or the CPU emulator")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// What gpubook found (driver, CUDA, NVRTC, the emulator's C++ compiler) and how to fix what is missing.
    Doctor,
    /// Measure copy bandwidth and vector add (naive and tuned) on the current device.
    Bench(bench::Args),
    /// Simulate a pipeline-parallel schedule (1F1B, ZB1P, DualPipe, DualPipeV).
    Pipeline(pipeline::Args),
    /// Regenerate exercises/ from solutions/ (maintainers), or --check for drift.
    Stubs(stubs::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => status::run(),
        Some(Command::Doctor) => doctor::run(),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Pipeline(args)) => pipeline::run(args),
        Some(Command::Stubs(args)) => stubs::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
