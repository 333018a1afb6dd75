//! `gpubook bench`: the memory ceiling (a device-to-device copy) and vector add, naive and
//! tuned, measured side by side in one run with CUDA events (the emulator's model on a CPU).
//! Bandwidth counts bytes read plus bytes written; each kernel's output is checked.

use anyhow::{Context, ensure};
use gpubook::gpu::{BackendKind, Gpu, LaunchConfig, Source, Stream, vector::Float4};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Elements per array (default: 2^26 = 256 MiB of f32 on a GPU, 2^20 on the emulator).
    #[arg(long)]
    elements: Option<usize>,
    /// Timed repetitions per row (the median is reported).
    #[arg(long, default_value_t = 20)]
    reps: usize,
}

struct Row {
    name: &'static str,
    bytes: f64,
    ms: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let gpu = Gpu::new()?;
    let default_n = if gpu.backend() == BackendKind::Cuda { 1 << 26 } else { 1 << 20 };
    let n = args.elements.unwrap_or(default_n).next_multiple_of(4);
    let stream = gpu.default_stream();
    gpu.set_tracing(false);
    let src = Source::library("bench/vector_add.cu");
    let module = gpu.load_module(src)?;
    let (naive, wide, tuned) =
        (module.load_function("vector_add_naive")?, module.load_function("vector_add_float4")?, module.load_function("vector_add_tuned")?);

    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
    let a_d = stream.clone_htod(&a)?;
    let b_d = stream.clone_htod(&b)?;
    let mut c_d = stream.alloc_zeros::<f32>(n)?;
    let a4 = stream.clone_htod(&to_float4(&a))?;
    let b4 = stream.clone_htod(&to_float4(&b))?;
    let mut c4 = stream.alloc_zeros::<Float4>(n / 4)?;
    let mut copy_dst = stream.alloc_zeros::<f32>(n)?;
    let (n_i, n4) = (n as i32, (n / 4) as i32);
    let bytes3 = (3 * n * 4) as f64;

    let mut rows = vec![Row {
        name: "copy DtoD (ceiling)",
        bytes: (2 * n * 4) as f64,
        ms: time(&stream, args.reps, || Ok(stream.memcpy_dtod(&a_d, &mut copy_dst)?))?,
    }];
    let block = 256u32;
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    rows.push(Row {
        name: "vector add, naive",
        bytes: bytes3,
        ms: time(&stream, args.reps, || {
            let mut l = stream.launch_builder(&naive);
            l.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
            // SAFETY: a_d, b_d and c_d hold n floats and the kernel's i < n guard stops the last
            // block.
            Ok(unsafe { l.launch(cfg) }?)
        })?,
    });
    check(&stream.clone_dtoh(&c_d)?, &a, &b).context("naive vector add gave wrong results")?;

    let cfg4 = LaunchConfig { grid_dim: ((n as u32 / 4).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    rows.push(Row {
        name: "vector add, float4",
        bytes: bytes3,
        ms: time(&stream, args.reps, || {
            let mut l = stream.launch_builder(&wide);
            l.arg(&a4).arg(&b4).arg(&mut c4).arg(&n4);
            // SAFETY: a4, b4 and c4 hold n / 4 float4s and the kernel's i < n4 guard stops the last
            // block.
            Ok(unsafe { l.launch(cfg4) }?)
        })?,
    });
    check(&from_float4(&stream.clone_dtoh(&c4)?), &a, &b).context("float4 vector add gave wrong results")?;

    stream.memset_zeros(&mut c4)?;
    let sms = gpu.info().multiprocessors.max(1);
    let cfg_t = LaunchConfig { grid_dim: (sms * 8, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    rows.push(Row {
        name: "vector add, tuned",
        bytes: bytes3,
        ms: time(&stream, args.reps, || {
            let mut l = stream.launch_builder(&tuned);
            l.arg(&a4).arg(&b4).arg(&mut c4).arg(&n4);
            // SAFETY: a4, b4 and c4 hold n / 4 float4s and both grid-stride loops stop at n4.
            Ok(unsafe { l.launch(cfg_t) }?)
        })?,
    });
    check(&from_float4(&stream.clone_dtoh(&c4)?), &a, &b).context("tuned vector add gave wrong results")?;

    let ceiling = rows[0].bytes / rows[0].ms;
    println!("gpubook bench on {} ({}), {n} f32 per array, median of {} runs", gpu.info().name, gpu.backend(), args.reps);
    if gpu.backend() == BackendKind::Emulator {
        println!("(emulator: times come from its cost model, not from hardware)");
    }
    println!("{:<22} {:>10} {:>10} {:>12}", "kernel", "ms", "GB/s", "of ceiling");
    for r in &rows {
        let gbs = r.bytes / r.ms / 1e6;
        println!("{:<22} {:>10.4} {:>10.1} {:>11.1}%", r.name, r.ms, gbs, 100.0 * (r.bytes / r.ms) / ceiling);
    }
    Ok(ExitCode::SUCCESS)
}

/// Median milliseconds of `reps` runs of `f`, each bracketed by events, after 3 warm-up runs.
fn time(stream: &Stream, reps: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    for _ in 0..3 {
        f()?;
    }
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let start = stream.record_event()?;
        f()?;
        let end = stream.record_event()?;
        ms.push(start.elapsed_ms(&end)? as f64);
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}

fn check(c: &[f32], a: &[f32], b: &[f32]) -> anyhow::Result<()> {
    ensure!(c.len() == a.len(), "length {} instead of {}", c.len(), a.len());
    if let Some(i) = (0..c.len()).find(|&i| c[i] != a[i] + b[i]) {
        anyhow::bail!("c[{i}] = {} but a[{i}] + b[{i}] = {}", c[i], a[i] + b[i]);
    }
    Ok(())
}

fn to_float4(v: &[f32]) -> Vec<Float4> {
    v.chunks_exact(4).map(|c| Float4 { x: c[0], y: c[1], z: c[2], w: c[3] }).collect()
}

fn from_float4(v: &[Float4]) -> Vec<f32> {
    v.iter().flat_map(|f| [f.x, f.y, f.z, f.w]).collect()
}
