//! Command-line front end. One module per command; each returns `anyhow::Result` so every
//! failure reaches the learner as one readable message, never a panic.
//!
//! The learner's runner: `list`, `check`, `watch`, `hint`, `solution`, `reset` (and `gpubook`
//! alone). They share `course` (catalog + progress), `runner` (grading through the test binary)
//! and `style` (colour).

mod bench;
mod book;
mod check;

mod dev;
mod doctor;
mod emu_bench;
mod hint;
mod list;
mod moe;
mod overlap;
mod perf_bench;
mod pipeline;
mod render;
mod reset;
mod run;
mod solution;
mod status;
mod streams_bench;

mod style;

mod watch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpubook",
    version,
    about = "GPU programming in Rust: the book's runner, on a GPU or the CPU emulator",
    after_help = "With no command: the device in use, your progress, and the next exercise."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Every exercise by chapter, with your progress.
    List,
    /// Grade one exercise (default: the first not passed yet) and show what the grader found.
    Check(check::Args),
    /// Grade the current exercise on every save; keys: n next, h hint, l list, q quit.
    Watch(watch::Args),
    /// One more hint for an exercise each time you ask.
    Hint(hint::Args),
    /// The book's answer to an exercise you have passed (or --force).
    Solution(solution::Args),
    /// Put an exercise's files back as they started.
    Reset(reset::Args),
    /// What gpubook found (driver, CUDA, NVRTC, the emulator's C++ compiler) and how to fix what is missing.
    Doctor,
    /// Measure copy bandwidth and vector add (naive and tuned) on the current device.
    Bench(bench::Args),
    /// How fast the CPU emulator runs kernels (check and fast mode) and compiles them.
    EmuBench(emu_bench::Args),
    /// Chapters 7-8 in one table: serial, ping-pong and three-stream pipelines against their bound, pinned vs pageable copies.
    StreamsBench(streams_bench::Args),
    /// Chapters 5-6 in one table: strided vs coalesced, bank conflicts vs padding, histograms, scans, against the copy; and the roofline.
    PerfBench(perf_bench::Args),
    /// Simulate a pipeline-parallel schedule (1F1B, ZB1P, DualPipe, DualPipeV).
    Pipeline(pipeline::Args),
    /// One DualPipe chunk pair on two streams: how much communication each order hides.
    Overlap(overlap::Args),
    /// Expert parallelism (chapters 12-13): `moe route` runs DeepSeek-V3's gate on logits from a file,
    /// `moe run` a whole MoE layer across ranks, checked against a dense one on the host.
    Moe(moe::Args),
    /// Maintainers' commands: regenerate the stubs, check the graders' reports.
    #[command(subcommand)]
    Dev(dev::Command),
    /// Launch one kernel with buffers and values given on the command line; print what happened.
    Run(run::Args),
    /// Build the book into target/book (figures run at build time), or --serve it while you edit.
    Book(book::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => status::run(),
        Some(Command::List) => list::run(),
        Some(Command::Check(args)) => check::run(args),
        Some(Command::Watch(args)) => watch::run(args),
        Some(Command::Hint(args)) => hint::run(args),
        Some(Command::Solution(args)) => solution::run(args),
        Some(Command::Reset(args)) => reset::run(args),
        Some(Command::Doctor) => doctor::run(),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::EmuBench(args)) => emu_bench::run(args),
        Some(Command::StreamsBench(args)) => streams_bench::run(args),
        Some(Command::PerfBench(args)) => perf_bench::run(args),
        Some(Command::Pipeline(args)) => pipeline::run(args),
        Some(Command::Overlap(args)) => overlap::run(args),
        Some(Command::Moe(args)) => moe::run(args),
        Some(Command::Dev(c)) => dev::run(c),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Book(args)) => book::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            anstream::eprintln!("{} {}", style::paint(style::BAD, "error:"), error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each cause only when the message does not already say it (an I/O
/// error's text is both in the error that wraps it and its source).
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}
