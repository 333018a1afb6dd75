//! `gpubook emu-bench`: how fast the CPU emulator runs kernels, in check and fast mode, and how
//! long it takes to compile one (cold and cached). With `--numba FILE` (the output of
//! scripts/bench/numba_cudasim.py) it prints numba's CUDA simulator beside it, with the ratio.
//! scripts/bench/emulator-vs-numba.sh runs both in one go.
//!
//! The native columns are the physical limit: the same kernel bodies as plain C++ loops
//! (kernels/bench/native.cpp), built by the emulator's compiler with fast mode's flags, timed in
//! the same run on as many threads as fast mode uses (fast mode's baseline) and on one thread
//! (check mode's: check mode runs one thread by design, for deterministic reports, so against
//! a many-thread baseline its ratio would mostly count the machine's cores).
//!
//! The speed goals are printed as `goal:` lines, both on the memory-bound kernel (the 16M vector
//! add): fast mode within 3x of native, check mode within 30x of native on one thread. A last
//! line says how far check mode and fast mode are from native on every row: on the barrier rows
//! each thread waits at every barrier on a fiber, which fast mode pays too.
//!
//! The engine column is check mode with every access check off (the hooks return at once): what
//! running threads on fibers, their barriers and a call per access cost by themselves, the floor
//! under check mode's ratio that no cheaper check can go below.

use anyhow::{Context, ensure};
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{Gpu, LaunchConfig, Source};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// numba's timings (lines `name elements seconds`) to compare against.
    #[arg(long)]
    numba: Option<PathBuf>,
    /// Only the rows whose label contains this text (`--only 16777216`, `--only matmul`), for
    /// profiling one kernel.
    #[arg(long)]
    only: Option<String>,
}

fn emulator(mode: Mode, bench_engine_only: bool) -> anyhow::Result<Gpu> {
    let env = EmuConfig::from_env();
    // Check mode's 16M vector add takes seconds a launch: more than a learner's default watchdog.
    let watchdog = env.watchdog.max(std::time::Duration::from_secs(600));
    let config = EmuConfig { mode, bench_engine_only, watchdog, ..env };
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
        // SAFETY: a_d, b_d and c_d hold n floats and the kernel's i < n guard stops the last
        // block.
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
        // SAFETY: x_d holds n floats, read under an i < n guard, and out one float per block.
        Ok(unsafe { l.launch(cfg) }?)
    })?;
    let total: f32 = s.clone_dtoh(&out)?.iter().sum();
    ensure!(total == x.iter().sum::<f32>(), "block_sum gave a wrong result");
    Ok(t)
}

fn matmul_tiled(gpu: &Gpu, n: usize, reps: usize) -> anyhow::Result<f64> {
    let s = gpu.default_stream();
    let f = gpu.load_module(Source::file(gpubook::paths::library_kernel("perf/roofline.cu")))?.load_function("matmul_tiled")?;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32).collect();
    let (a_d, b_d) = (s.clone_htod(&a)?, s.clone_htod(&vec![1.0f32; n * n])?);
    let mut c_d = s.alloc_zeros::<f32>(n * n)?;
    let n_i = n as i32;
    let tiles = (n as u32).div_ceil(16);
    let cfg = LaunchConfig { grid_dim: (tiles, tiles, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 };
    let t = median(reps, || {
        let mut l = s.launch_builder(&f);
        l.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i).arg(&n_i).arg(&n_i);
        // SAFETY: a_d, b_d and c_d hold n × n floats and the kernel guards every access with
        // row and col against n.
        Ok(unsafe { l.launch(cfg) }?)
    })?;
    let c = s.clone_dtoh(&c_d)?;
    // B is all ones: each element of C is its row's sum of A.
    let ok = (0..n).all(|r| (0..n).all(|col| c[r * n + col] == a[r * n..(r + 1) * n].iter().sum::<f32>()));
    ensure!(ok, "matmul_tiled gave a wrong result");
    Ok(t)
}

/// kernels/bench/native.cpp built once per run with the emulator's compiler and fast mode's flags.
struct Native {
    exe: PathBuf,
}

impl Native {
    fn build() -> anyhow::Result<Native> {
        let compiler = gpubook::emu::probe_compiler(&gpubook::emu::EmuConfig::from_env())?;
        let dir = std::env::temp_dir().join(format!("gpubook-native-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let exe = dir.join("native");
        let src = gpubook::paths::library_kernel("bench/native.cpp");
        let out = Command::new(&compiler.cxx)
            .args(gpubook::emu::fast_mode_flags())
            .arg("-pthread")
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .with_context(|| format!("running {}", compiler.cxx.display()))?;
        ensure!(out.status.success(), "building {} failed:\n{}", src.display(), String::from_utf8_lossy(&out.stderr));
        Ok(Native { exe })
    }

    /// Median seconds on `threads` threads, and the checksum of what it wrote.
    fn time(&self, kernel: &str, size: usize, reps: usize, threads: usize) -> anyhow::Result<(f64, f64)> {
        let out = Command::new(&self.exe)
            .args([kernel.to_string(), size.to_string(), reps.to_string(), threads.to_string()])
            .output()
            .with_context(|| format!("running {}", self.exe.display()))?;
        ensure!(out.status.success(), "{} {kernel} failed: {}", self.exe.display(), String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let mut w = text.split_whitespace().map(str::parse::<f64>);
        match (w.next(), w.next()) {
            (Some(Ok(t)), Some(Ok(sum))) => Ok((t, sum)),
            _ => anyhow::bail!("{} printed `{}`, not `SECONDS CHECKSUM`", self.exe.display(), text.trim()),
        }
    }

    /// Median seconds of `kernel`, its checksum compared with `want` (relative 1e-4).
    fn checked(&self, kernel: &str, size: usize, reps: usize, threads: usize, want: f64) -> anyhow::Result<f64> {
        let (t, sum) = self.time(kernel, size, reps, threads)?;
        ensure!((sum - want).abs() <= 1e-4 * want.abs().max(1.0), "native {kernel} wrote checksum {sum}, not {want}");
        Ok(t)
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(dir) = self.exe.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The checksum native.cpp prints for each kernel: what a right answer writes.
fn native_checksum(kernel: &str, n: usize) -> f64 {
    let sevens = |len: usize| (0..len).map(|i| (i % 7) as f64).sum::<f64>();
    match kernel {
        "vector_add" => (0..n).map(|i| i as f64 + 1.0).sum(),
        "block_sum" => sevens(n),
        _ => n as f64 * sevens(n * n),
    }
}

/// The native loop runs ten times as often as the emulator: a small row's native time is tens
/// of microseconds, and a median of five of those moved 2x from run to run.
fn native_reps(reps: usize) -> usize {
    (reps * 10).max(11)
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.1}x", a / b)
}

/// `goal: WHAT within Nx of BASELINE: met (ratio)`.
fn goal(what: &str, baseline: &str, got: f64, limit: f64) {
    let verdict = if got <= limit { "met" } else { "NOT met" };
    println!("goal: {what} within {limit:.0}x of {baseline}: {verdict} ({got:.1}x)");
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
    let (check, fast) = (emulator(Mode::Check, false)?, emulator(Mode::Fast, false)?);
    let engine = emulator(Mode::Check, true)?;
    let threads = fast.emulator().map_or(1, |e| e.config().threads);
    let native = Native::build()?;
    let numba = a.numba.as_ref().map(numba_times).transpose()?.unwrap_or_default();
    let numba_of = |name: &str| numba.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
    type Bench = fn(&Gpu, usize, usize) -> anyhow::Result<f64>;
    let rows: [(&str, &str, usize, usize, Bench); 4] = [
        ("vector_add", "vector_add", 65_536, a.reps, vector_add),
        ("vector_add", "vector_add", 16 << 20, a.reps.min(3), vector_add),
        ("block_sum", "block_sum", 16_384, a.reps, block_sum),
        ("matmul_tiled", "matmul_tiled", 128, a.reps, matmul_tiled),
    ];
    let label = |name: &str, n: usize| if name == "matmul_tiled" { format!("{name} ({n}x{n})") } else { format!("{name} ({n})") };
    if let Some(o) = &a.only {
        let labels: Vec<String> = rows.iter().map(|r| label(r.0, r.2)).collect();
        ensure!(labels.iter().any(|l| l.contains(o.as_str())), "--only {o:?} matches no row; the rows are: {}", labels.join(", "));
    }
    println!(
        "gpubook emulator on {} ({threads} fast-mode threads; native on as many, and on 1 for check mode's 1), median of {} runs (native: of {})",
        std::env::consts::ARCH,
        a.reps,
        native_reps(a.reps)
    );
    println!(
        "{:<22} {:>10} {:>10} {:>10} {:>11} {:>11} {:>12} {:>13} {:>14} {:>10} {:>12}",
        "kernel",
        "check (s)",
        "engine (s)",
        "fast (s)",
        "native (s)",
        "native 1t",
        "fast/native",
        "check/nat 1t",
        "engine/nat 1t",
        "numba (s)",
        "numba/check"
    );
    let mut memory_bound = None;
    let mut worst_check: Option<f64> = None;
    let mut worst_engine: Option<f64> = None;
    let mut worst_fast: Option<f64> = None;
    for (name, kernel, n, reps, bench) in rows {
        let label = label(name, n);
        if a.only.as_ref().is_some_and(|o| !label.contains(o.as_str())) {
            continue;
        }
        let c = bench(&check, n, reps)?;
        let e = bench(&engine, n, reps)?;
        let f = bench(&fast, n, reps)?;
        let nat = native.checked(kernel, n, native_reps(reps), threads, native_checksum(kernel, n))?;
        let nat1 = native.checked(kernel, n, native_reps(reps), 1, native_checksum(kernel, n))?;
        let (nb, nb_ratio) = match numba_of(name).filter(|_| n <= 65_536) {
            Some(t) => (format!("{t:.3}"), format!("{:.0}x", t / c)),
            None => ("-".into(), "-".into()),
        };
        // Microseconds: a small row's native time is tens of them.
        println!(
            "{label:<22} {c:>10.6} {e:>10.6} {f:>10.6} {nat:>11.6} {nat1:>11.6} {:>12} {:>13} {:>14} {nb:>10} {nb_ratio:>12}",
            ratio(f, nat),
            ratio(c, nat1),
            ratio(e, nat1)
        );
        if n == 16 << 20 {
            memory_bound = Some((f / nat, c / nat1));
        }
        worst_check = Some(worst_check.unwrap_or(0.0).max(c / nat1));
        worst_engine = Some(worst_engine.unwrap_or(0.0).max(e / nat1));
        worst_fast = Some(worst_fast.unwrap_or(0.0).max(f / nat));
    }
    if let Some((fast, check)) = memory_bound {
        goal("fast mode on the memory-bound vector_add (16M)", "native", fast, 3.0);
        goal("check mode on the memory-bound vector_add (16M)", "native on 1 thread", check, 30.0);
    }
    // The goals are the memory-bound kernel's. On the barrier rows fast mode, which checks
    // nothing, is itself far past 30x (every thread waits at every barrier on a fiber), so the
    // line says where check mode stands there without calling it a goal.
    if let (Some(check), Some(fast)) = (worst_check, worst_fast) {
        let within = if check <= 30.0 { "within" } else { "not within" };
        println!(
            "every kernel above: check mode up to {check:.1}x native on 1 thread ({within} 30x); \
             fast mode, which checks nothing, up to {fast:.1}x native"
        );
    }
    if let Some(r) = worst_engine {
        println!("floor: check mode's engine with every access check off is up to {r:.1}x native on 1 thread");
    }
    let (cold, warm) = compile_times(&check)?;
    println!("compile vector_add.cu: {cold:.3} s cold, {warm:.4} s cached");
    Ok(ExitCode::SUCCESS)
}
