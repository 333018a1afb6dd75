//! `gpubook overlap`: one DualPipe chunk pair issued three ways, and how much of its
//! communication each way hides (chapter 11); with `--comm kernel`, the pair in DualPipe's
//! order with its communication as a kernel on k SMs of its own (chapter 14). On a GPU the
//! times are measured with CUDA events; on the emulator they come from its timeline model.

use anyhow::Context;
use gpubook::gpu::{BackendKind, Gpu, Trace, TraceOp};
use gpubook_labs::chunk_pair::{self, PairConfig, Plan, is_communication, is_compute};
use gpubook_labs::viz::backend_label;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Floats per buffer (default: 2^24 on a GPU, 2^19 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Work per element in each `layer` kernel (default: 256 on a GPU, 1 on the emulator).
    #[arg(long)]
    rounds: Option<i32>,
    /// Blocks of 256 threads per SM a `layer` kernel may use; 0 for one thread per element,
    /// which fills the GPU (default: 4, half an SM).
    #[arg(long)]
    blocks_per_sm: Option<u32>,
    /// Runs of each plan; the table shows the fastest (default: 3 on a GPU, 1 on the emulator,
    /// whose timeline does not vary).
    #[arg(long)]
    reps: Option<usize>,
    /// Write each plan's timeline into this folder (SVG).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// How the communication runs: `copies` (device-to-device copies, the three plans side by
    /// side) or `kernel` (a copy kernel on k SMs of its own, the computation on all the
    /// others: DualPipe's order for each k of --comm-sms, against copies).
    #[arg(long, value_enum, default_value = "copies")]
    comm: CommArg,
    /// With `--comm kernel`: the SMs the communication kernel holds, one row each (default:
    /// 4,8,16,24,32 on a GPU, 2,4,8 on the emulator).
    #[arg(long, value_delimiter = ',')]
    comm_sms: Vec<u32>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CommArg {
    Copies,
    Kernel,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let gpu = Gpu::new()?;
    if a.comm == CommArg::Kernel {
        return comm_kernel(&gpu, &a);
    }
    if !a.comm_sms.is_empty() {
        anyhow::bail!("--comm-sms goes with --comm kernel");
    }
    let n = a.n.unwrap_or_else(|| chunk_pair::default_len(&gpu));
    let mut config = PairConfig::for_device(&gpu);
    if let Some(rounds) = a.rounds {
        config.rounds = rounds;
    }
    if let Some(per_sm) = a.blocks_per_sm {
        config.blocks_per_sm = (per_sm > 0).then_some(per_sm);
    }
    println!("One DualPipe chunk pair on {}", backend_label(&gpu));
    println!("forward ATTN → DISPATCH → MLP → COMBINE, backward COMBINE → MLP → DISPATCH → ATTN; {n} floats ({}) a buffer", bytes(n * 4));
    let blocks = match config.blocks_per_sm {
        Some(b) => format!("at most {b} blocks per SM of {}", gpu.info().multiprocessors),
        None => "one thread per element".to_string(),
    };
    let rounds = format!("{} round{}", config.rounds, if config.rounds == 1 { "" } else { "s" });
    println!("computation: `layer` kernels ({rounds}, {blocks}); communication: device-to-device copies\n");
    let reps = a.reps.unwrap_or_else(|| chunk_pair::default_reps(&gpu));
    let runs = chunk_pair::compare(&gpu, n, config, reps)?;
    print!("{}", chunk_pair::overlap_table(&runs));
    let alone = &runs[0];
    let dualpipe = runs.iter().find(|m| m.plan == Plan::DualPipe).expect("DualPipe is one of the plans");
    println!(
        "\nOn one stream a computation takes {:.1} µs and a communication {:.1} µs (means).",
        mean(&alone.trace, is_compute),
        mean(&alone.trace, is_communication)
    );
    println!(
        "\"hidden\": 1 - (time no kernel ran) / (time the copies take on one stream). DualPipe's order hides \
         {:.0}% of the communication; chapter 11's exercise asks for at least 80%.",
        100.0 * dualpipe.overlap.hidden_against(&alone.overlap)
    );
    if let Some(dir) = a.svg {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for m in &runs {
            let title =
                format!("A chunk pair, {}: {:.0}% of the communication hidden", m.plan, 100.0 * m.overlap.hidden_against(&alone.overlap));
            let path = dir.join(format!("chunk_pair_{}.svg", m.plan.key()));
            m.timeline(&title).svg().save(&path).with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--comm kernel`: the sweep over the communication kernel's SMs.
fn comm_kernel(gpu: &Gpu, a: &Args) -> anyhow::Result<ExitCode> {
    if a.blocks_per_sm.is_some() || a.svg.is_some() {
        anyhow::bail!("--blocks-per-sm and --svg go with --comm copies (the kernel's blocks each hold a whole SM)");
    }
    let n = a.n.unwrap_or_else(|| chunk_pair::default_len(gpu));
    let rounds = a.rounds.unwrap_or(PairConfig::for_device(gpu).rounds);
    let sms = if a.comm_sms.is_empty() { chunk_pair::default_comm_sms(gpu) } else { a.comm_sms.clone() };
    let reps = a.reps.unwrap_or_else(|| chunk_pair::default_reps(gpu));
    println!("One DualPipe chunk pair on {}, communication as a kernel on k SMs", backend_label(gpu));
    println!(
        "{n} floats ({}) a buffer; `layer` kernels of {rounds} round{}; {} SMs",
        bytes(n * 4),
        if rounds == 1 { "" } else { "s" },
        gpu.info().multiprocessors
    );
    println!(
        "kernel rows: `comm_copy` on k blocks, each copying its slice of the buffer, and `layer` on\n\
         all the other SMs; every block has 1024 threads and holds a whole SM (its shared memory\n\
         leaves no room for a second block)\n"
    );
    let rows = chunk_pair::comm_sweep(gpu, n, rounds, &sms, reps)?;
    print!("{}", chunk_pair::comm_sweep_table(&rows));
    println!("{}", chunk_pair::COMM_SWEEP_NOTE);
    if gpu.backend() == BackendKind::Emulator {
        println!(
            "\nOn the emulator these times come from its timeline model, which runs one kernel at a\n\
             time: a communication kernel never overlaps a computation there, so the kernel rows\n\
             show the code path, not the effect. Run it on a GPU for the numbers."
        );
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
