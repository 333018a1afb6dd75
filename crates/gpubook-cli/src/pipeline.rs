//! `gpubook pipeline`: simulate a pipeline-parallel schedule and print its bubbles (and draw it).

use anyhow::Context;
use gpubook::sim::{PipelineArgs, ScheduleKind, gantt_svg, run_report};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// 1f1b, zb1p, dualpipe or dualpipev.
    #[arg(long, default_value = "dualpipe")]
    schedule: ScheduleKind,
    /// Pipeline stages (DualPipeV runs them on pp/2 devices).
    #[arg(long, default_value_t = 8)]
    pp: usize,
    #[arg(long, default_value_t = 20)]
    microbatches: usize,
    /// Forward chunk time.
    #[arg(long, default_value_t = 1.0)]
    f: f64,
    /// Full backward chunk time (W included).
    #[arg(long, default_value_t = 2.0)]
    b: f64,
    /// Weight-gradient part of the backward.
    #[arg(long, default_value_t = 1.0)]
    w: f64,
    /// An overlapped forward+backward pair (default f + b: no overlap gain).
    #[arg(long)]
    fb: Option<f64>,
    /// Point-to-point latency between stages.
    #[arg(long, default_value_t = 0.0)]
    latency: f64,
    /// Write the Gantt chart here (SVG).
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let args =
        PipelineArgs { schedule: a.schedule, pp: a.pp, microbatches: a.microbatches, f: a.f, b: a.b, w: a.w, fb: a.fb, latency: a.latency };
    print!("{}", run_report(&args)?);
    if let Some(path) = a.svg {
        let result = args.simulate()?;
        let title = format!("{} PP={} N={}", args.schedule.name(), args.pp, args.microbatches);
        std::fs::write(&path, gantt_svg(&result, &title)).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
