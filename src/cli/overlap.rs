//! `gpubook overlap`: one DualPipe chunk pair issued three ways, and how much of its
//! communication each way hides under computation (chapter 9). On a GPU the times are measured
//! with CUDA events; on the emulator they come from its timeline model.

use anyhow::Context;
use gpubook::chunk_pair::{self, Plan, is_communication, is_compute};
use gpubook::gpu::{Gpu, Trace, TraceOp};
use gpubook::viz::{backend_label, timeline_svg};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Floats per buffer (default: 2^20 on a GPU, 2^18 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Work per element in each `layer` kernel (default: 2048 on a GPU, 1 on the emulator).
    #[arg(long)]
    rounds: Option<i32>,
    /// Runs of each plan; the table shows the last, after the others warmed the device up.
    #[arg(long, default_value_t = 2)]
    reps: usize,
    /// Write each plan's timeline into this folder (SVG).
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let gpu = Gpu::new()?;
    let n = a.n.unwrap_or_else(|| chunk_pair::default_len(&gpu));
    let rounds = a.rounds.unwrap_or_else(|| chunk_pair::default_rounds(&gpu));
    println!("One DualPipe chunk pair on {}", backend_label(&gpu));
    println!("forward ATTN → DISPATCH → MLP → COMBINE, backward COMBINE → MLP → DISPATCH → ATTN; {n} floats ({}) a buffer", bytes(n * 4));
    println!("computation: `layer` kernels ({rounds} rounds); communication: device-to-device copies\n");
    let mut runs = Vec::new();
    for plan in Plan::ALL {
        let mut last = None;
        for _ in 0..a.reps.max(1) {
            last = Some(chunk_pair::measure(&gpu, plan, n, rounds).with_context(|| format!("running the plan `{plan}`"))?);
        }
        runs.push(last.expect("at least one run"));
    }
    print!("{}", chunk_pair::overlap_table(&runs));
    let dualpipe = runs.iter().find(|m| m.plan == Plan::DualPipe).expect("DualPipe is one of the plans");
    println!(
        "\nOne step takes {:.1} µs of computation or {:.1} µs of communication (means).",
        mean(&dualpipe.trace, is_compute),
        mean(&dualpipe.trace, is_communication)
    );
    println!(
        "DualPipe's order hides {:.0}% of the communication; chapter 9's exercise asks for at least 80%.",
        100.0 * dualpipe.overlap.hidden()
    );
    if let Some(dir) = a.svg {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for m in &runs {
            let title = format!("A chunk pair, {}: {:.0}% of the communication hidden", m.plan, 100.0 * m.overlap.hidden());
            let path = dir.join(format!("chunk_pair_{}.svg", slug(m.plan)));
            timeline_svg(&m.trace, &title).save(&path).with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn mean(trace: &Trace, select: fn(&TraceOp) -> bool) -> f64 {
    let times: Vec<f64> = trace.ops.iter().filter(|o| select(o)).map(TraceOp::duration_us).collect();
    times.iter().sum::<f64>() / times.len().max(1) as f64
}

fn bytes(b: usize) -> String {
    match b {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn slug(plan: Plan) -> &'static str {
    match plan {
        Plan::OneStream => "one_stream",
        Plan::ChunkByChunk => "chunk_by_chunk",
        Plan::DualPipe => "dualpipe",
    }
}
