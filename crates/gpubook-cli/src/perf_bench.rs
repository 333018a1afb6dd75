//! `gpubook perf-bench`: chapters 5 and 6 in one table (strided against coalesced, bank
//! conflicts against padding, histograms, scans), each in GB/s and as a fraction of the copy
//! measured in the same run, then the roofline (gpubook_labs::perf and ::roofline).

use gpubook::gpu::Gpu;
use gpubook_labs::{perf, roofline};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Elements of each array (default: 2^26 on a GPU, 2^16 on the emulator).
    #[arg(long)]
    elements: Option<usize>,
    /// Timed runs per row (the median is reported; default 20 on a GPU, 1 on the emulator).
    #[arg(long)]
    reps: Option<usize>,
    /// Also write the roofline figure here as roofline.svg.
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let gpu = Gpu::new()?;
    let mut config = perf::BenchConfig::for_device(&gpu);
    config.elements = args.elements.unwrap_or(config.elements);
    config.reps = args.reps.unwrap_or(config.reps);
    let run = perf::run(&gpu, config)?;
    print!("{}", perf::table(&run));
    let roof = roofline::measure(&gpu, config)?;
    println!();
    print!("{}", roofline::table(&roof));
    if let Some(dir) = args.svg {
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("roofline.svg");
        let title = format!("The roofline of {}", gpubook_labs::viz::backend_label(&gpu));
        std::fs::write(&path, gpubook_labs::viz::roofline_svg(&roof, &title).as_str())?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
