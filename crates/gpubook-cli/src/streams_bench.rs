//! `gpubook streams-bench`: chapters 7 and 8 in one table. The same chunked job (copy in,
//! y = 2x + 0.5, copy out) runs serial, as a two-stream ping-pong and on three streams with
//! events; each is compared with its busiest engine (the bound no pipeline beats) and with the
//! serial run, and pinned copies with pageable ones. Times are CUDA events on a GPU and the
//! timeline model on the emulator (run in fast mode here: the model's times do not depend on it).

use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{BackendKind, Gpu};
use gpubook_labs::overlap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Chunks the job is cut into.
    #[arg(long, default_value_t = overlap::DEFAULT_CHUNKS)]
    chunks: usize,
    /// Floats per chunk (default: 4 Mi = 16 MiB on a GPU, 1 Mi = 4 MiB on the emulator).
    #[arg(long)]
    chunk_elems: Option<usize>,
    /// MiB per copy in the bandwidth measurement.
    #[arg(long, default_value_t = 64)]
    bw_mib: usize,
    /// Timed copies per bandwidth row (the median is shown).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Also write each design's timeline as an SVG into this folder.
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut gpu = Gpu::new()?;
    if gpu.backend() == BackendKind::Emulator {
        gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Fast, ..EmuConfig::from_env() })?;
    }
    let chunk_elems = args.chunk_elems.unwrap_or_else(|| overlap::default_chunk_elems(&gpu));
    anyhow::ensure!(args.chunks > 0 && chunk_elems > 0, "--chunks and --chunk-elems must be positive");
    println!("gpubook streams-bench on {} ({})", gpu.info().name, gpu.backend());
    let (report, runs) = overlap::report(&gpu, args.chunks, chunk_elems, args.bw_mib << 20, args.reps)?;
    print!("{report}");
    if let Some(dir) = args.svg {
        std::fs::create_dir_all(&dir)?;
        for r in &runs {
            let title = format!("{} on {}", r.design.name(), gpubook_labs::viz::backend_label(&gpu));
            let path = dir.join(format!("{}.svg", r.design.key()));
            r.timeline(&title).svg().save(&path)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
