//! `gpubook emu-bench`: how fast the CPU emulator runs kernels, in check and fast mode, and how
//! long it takes to compile one (cold and cached). With `--numba FILE` (the output of
//! scripts/bench/numba_cudasim.py) it prints numba's CUDA simulator beside it, with the ratio.
//! scripts/bench/emulator-vs-numba.sh runs both in one go.

use anyhow::{Context, ensure};
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{Gpu, LaunchConfig, Source};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// numba's timings (lines `name elements seconds`) to compare against.
    #[arg(long)]
    numba: Option<PathBuf>,
}

fn emulator(mode: Mode) -> anyhow::Result<Gpu> {
    let config = EmuConfig { mode, ..EmuConfig::from_env() };
    Ok(Gpu::emulated(0, config)?)
}

fn bench_file(name: &str) -> Source {
    Source::file(gpubook::paths::library_kernel(&format!("bench/{name}")))
}

/// Median seconds of `reps` runs of one launch (the emulator runs a launch before returning).
fn median(reps: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    f()?; // warm: the worker starts and loads the module
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            f().map(|_| start.elapsed().as_secs_f64())
        })
        .collect::<anyhow::Result<_>>()?;
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn vector_add(gpu: &Gpu, n: usize, reps: usize) -> anyhow::Result<f64> {
    let s = gpu.default_stream();
    let f = gpu.load_module(bench_file("vector_add.cu"))?.load_function("vector_add_naive")?;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (a_d, b_d) = (s.clone_htod(&a)?, s.clone_htod(&vec![1.0f32; n])?);
    let mut c_d = s.alloc_zeros::<f32>(n)?;
    let n_i = n as i32;
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let t = median(reps, || {
        let mut l = s.launch_builder(&f);
        l.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
        Ok(unsafe { l.launch(cfg) }?)
    })?;
    let c = s.clone_dtoh(&c_d)?;
    ensure!((0..n).all(|i| c[i] == a[i] + 1.0), "vector_add gave a wrong result");
    Ok(t)
}

fn block_sum(gpu: &Gpu, n: usize, reps: usize) -> anyhow::Result<f64> {
    let s = gpu.default_stream();
    let f = gpu.load_module(bench_file("reduce.cu"))?.load_function("block_sum")?;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let blocks = n.div_ceil(256);
    let x_d = s.clone_htod(&x)?;
    let mut out = s.alloc_zeros::<f32>(blocks)?;
    let n_i = n as i32;
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let t = median(reps, || {
        let mut l = s.launch_builder(&f);
        l.arg(&x_d).arg(&mut out).arg(&n_i);
        Ok(unsafe { l.launch(cfg) }?)
    })?;
    let total: f32 = s.clone_dtoh(&out)?.iter().sum();
    ensure!(total == x.iter().sum::<f32>(), "block_sum gave a wrong result");
    Ok(t)
}

/// Seconds to load a module never seen before (a unique comment defeats the cache), then again.
fn compile_times(gpu: &Gpu) -> anyhow::Result<(f64, f64)> {
    let path = gpubook::paths::library_kernel("bench/vector_add.cu");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let nonce = format!("// nonce {:?} {}\n", Instant::now(), std::process::id());
    let src = Source::text("vector_add.cu", format!("{nonce}{text}"));
    let start = Instant::now();
    gpu.load_module(src.clone())?;
    let cold = start.elapsed().as_secs_f64();
    let start = Instant::now();
    gpu.load_module(src)?;
    Ok((cold, start.elapsed().as_secs_f64()))
}

fn numba_times(path: &PathBuf) -> anyhow::Result<Vec<(String, f64)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.first()?.to_string(), w.get(2)?.parse().ok()?))
        })
        .collect())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (check, fast) = (emulator(Mode::Check)?, emulator(Mode::Fast)?);
    let numba = a.numba.as_ref().map(numba_times).transpose()?.unwrap_or_default();
    let numba_of = |name: &str| numba.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
    println!(
        "gpubook emulator on {} ({} fast-mode threads), median of {} runs",
        std::env::consts::ARCH,
        fast.emulator().map_or(1, |e| e.config().threads),
        a.reps
    );
    println!("{:<26} {:>12} {:>12} {:>12} {:>14}", "kernel", "check (s)", "fast (s)", "numba (s)", "numba / check");
    let rows = [
        ("vector_add", 65_536, vector_add(&check, 65_536, a.reps)?, vector_add(&fast, 65_536, a.reps)?),
        ("block_sum", 16_384, block_sum(&check, 16_384, a.reps)?, block_sum(&fast, 16_384, a.reps)?),
    ];
    for (name, n, c, f) in rows {
        let (nb, ratio) = match numba_of(name) {
            Some(t) => (format!("{t:.3}"), format!("{:.0}x", t / c)),
            None => ("-".into(), "-".into()),
        };
        println!("{:<26} {c:>12.5} {f:>12.5} {nb:>12} {ratio:>14}", format!("{name} ({n})"));
    }
    let big = vector_add(&fast, 16 << 20, a.reps.min(3))?;
    println!("{:<26} {:>12} {big:>12.3}", "vector_add (16M)", "-");
    let (cold, warm) = compile_times(&check)?;
    println!("compile vector_add.cu: {cold:.3} s cold, {warm:.4} s cached");
    Ok(ExitCode::SUCCESS)
}
