//! The roofline: a kernel that does F floating-point operations while moving B bytes has an
//! arithmetic intensity of F / B FLOP per byte, and runs at most at min(peak, bandwidth × F / B).
//! On a GPU both roofs are measured here (the device-to-device copy for the bandwidth, a kernel of
//! nothing but fused multiply-adds for the peak) and the book's kernels are timed under them,
//! their bytes counted as the least the work must move. The emulator cannot time anything, but
//! it counts the bytes a kernel asks for in 32-byte sectors (what DRAM would move with no cache):
//! there the kernels are placed at those intensities under an H200's datasheet roofs, at the
//! most the roofs allow.

use super::perf::{Bench, BenchConfig, Counted};
use gpubook::gpu::{BackendKind, Gpu, LaunchConfig, Result, Source};
use std::fmt::Write;

/// The two roofs, and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofs {
    /// GB/s (10^9 bytes a second).
    pub bandwidth: f64,
    /// GFLOP/s of FP32 arithmetic (fused multiply-adds counted as two).
    pub peak: f64,
    /// "measured on NVIDIA H200", or the datasheet the numbers come from.
    pub source: String,
}

impl Roofs {
    /// An H200 SXM's datasheet: 4.8 TB/s of HBM3e and 67 TFLOP/s of FP32 (no tensor cores).
    pub fn h200_datasheet() -> Roofs {
        Roofs { bandwidth: 4800.0, peak: 67_000.0, source: "an H200's datasheet (4.8 TB/s, 67 TFLOP/s FP32)".into() }
    }

    /// The most a kernel of intensity `ai` (FLOP/byte) can reach, in GFLOP/s.
    pub fn attainable(&self, ai: f64) -> f64 {
        self.peak.min(self.bandwidth * ai)
    }

    /// The intensity where the roofs meet: below it a kernel is memory-bound.
    pub fn ridge(&self) -> f64 {
        self.peak / self.bandwidth
    }
}

/// One kernel on the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofPoint {
    pub name: &'static str,
    pub flops: f64,
    /// Bytes: the least the work moves (GPU), or the sectors the emulator counted.
    pub bytes: f64,
    /// Measured milliseconds (GPU only).
    pub ms: Option<f64>,
}

impl RoofPoint {
    pub fn intensity(&self) -> f64 {
        self.flops / self.bytes.max(1.0)
    }
    /// Measured GFLOP/s, when timed.
    pub fn gflop_per_s(&self) -> Option<f64> {
        self.ms.map(|ms| self.flops / ms / 1e6)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Roofline {
    pub device: String,
    pub backend: BackendKind,
    pub roofs: Roofs,
    pub points: Vec<RoofPoint>,
}

/// Kernel names as the table and the figure print them.
pub const VECTOR_ADD: &str = "vector add";
pub const MATMUL_NAIVE: &str = "matmul, naive";
pub const MATMUL_TILED: &str = "matmul, 16x16 tiles";
pub const FMA_PEAK: &str = "fma_peak";

/// Measures the roofs (on a GPU) and places the book's kernels under them.
pub fn measure(gpu: &Gpu, config: BenchConfig) -> Result<Roofline> {
    let bench = Bench::new(gpu, config)?;
    let gpu_run = gpu.backend() == BackendKind::Cuda;
    let stream = &bench.stream;
    let mut points = Vec::new();
    // Bytes as timed (GPU: the least the work moves) or as counted (the emulator's sectors).
    let bytes = |least: usize, counted: Option<Counted>| counted.map_or(least as f64, |c| c.sector_bytes as f64);
    let timed = |ms: f64| gpu_run.then_some(ms);

    let n = config.elements.max(1024);
    let ones = vec![1.0f32; n];
    let a = stream.clone_htod(&ones)?;
    let b = stream.clone_htod(&ones)?;
    let mut c = stream.alloc_zeros::<f32>(n)?;
    let copy = if gpu_run { bench.time(|| stream.memcpy_dtod(&a, &mut c))?.0 } else { 0.0 };
    let add = gpu.load_module(Source::library("bench/vector_add.cu"))?.load_function("vector_add_naive")?;
    let n_i = n as i32;
    let (ms, counted) = bench.time(|| {
        let mut l = stream.launch_builder(&add);
        l.arg(&a).arg(&b).arg(&mut c).arg(&n_i);
        // SAFETY: a, b and c hold n floats and the kernel's i < n guard stops the last block.
        unsafe { l.launch(LaunchConfig { grid_dim: (n.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }
    })?;
    points.push(RoofPoint { name: VECTOR_ADD, flops: n as f64, bytes: bytes(12 * n, counted), ms: timed(ms) });

    let dim = if gpu_run { 2048 } else { 64 };
    let m: Vec<f32> = (0..dim * dim).map(|i| (i % 7) as f32 * 0.25).collect();
    let a_m = stream.clone_htod(&m)?;
    let b_m = stream.clone_htod(&m)?;
    let mut c_m = stream.alloc_zeros::<f32>(dim * dim)?;
    let d = dim as i32;
    let naive = gpu.load_module(Source::library("demos/shared_memory.cu"))?.load_function("naive_matmul")?;
    let tiled = gpu.load_module(Source::library("perf/roofline.cu"))?.load_function("matmul_tiled")?;
    let grid = (dim.div_ceil(16) as u32, dim.div_ceil(16) as u32, 1);
    let cfg = LaunchConfig { grid_dim: grid, block_dim: (16, 16, 1), shared_mem_bytes: 0 };
    for (name, f) in [(MATMUL_NAIVE, &naive), (MATMUL_TILED, &tiled)] {
        let (ms, counted) = bench.time(|| {
            let mut l = stream.launch_builder(f);
            l.arg(&a_m).arg(&b_m).arg(&mut c_m).arg(&d).arg(&d).arg(&d);
            // SAFETY: a_m, b_m and c_m hold dim × dim floats and both kernels guard every access
            // with row and col against dim.
            unsafe { l.launch(cfg) }
        })?;
        let flops = 2.0 * (dim * dim * dim) as f64;
        points.push(RoofPoint { name, flops, bytes: bytes(12 * dim * dim, counted), ms: timed(ms) });
    }

    let fma = gpu.load_module(Source::library("perf/roofline.cu"))?.load_function("fma_peak")?;
    let blocks = if gpu_run { gpu.info().multiprocessors * (gpu.info().sm.max_threads / 256).max(1) } else { 1 };
    let iters: i32 = if gpu_run { 8192 } else { 64 };
    let threads = blocks as usize * 256;
    let mut out = stream.alloc_zeros::<f32>(threads)?;
    let (b_coef, c_coef) = (0.999f32, 0.001f32);
    let (ms, counted) = bench.time(|| {
        let mut l = stream.launch_builder(&fma);
        l.arg(&mut out).arg(&iters).arg(&b_coef).arg(&c_coef);
        // SAFETY: out holds one float per thread of the grid, the only element each thread
        // writes.
        unsafe { l.launch(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }
    })?;
    let flops = 16.0 * iters as f64 * threads as f64;
    points.push(RoofPoint { name: FMA_PEAK, flops, bytes: bytes(4 * threads, counted), ms: timed(ms) });

    let roofs = if gpu_run {
        let fma_point = points.last().expect("fma_peak was just measured");
        Roofs {
            bandwidth: 8.0 * n as f64 / copy / 1e6,
            peak: fma_point.gflop_per_s().unwrap_or(0.0),
            source: format!("measured on {} (copy DtoD, fma_peak)", gpu.info().name),
        }
    } else {
        Roofs::h200_datasheet()
    };
    Ok(Roofline { device: gpu.info().name.clone(), backend: gpu.backend(), roofs, points })
}

/// The roofline as a table: each kernel's intensity, what the roofs allow it, and (timed) what it
/// reached.
pub fn table(r: &Roofline) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "roofline: {:.0} GB/s, {:.1} TFLOP/s FP32, ridge at {:.1} FLOP/byte ({})",
        r.roofs.bandwidth,
        r.roofs.peak / 1e3,
        r.roofs.ridge(),
        r.roofs.source
    );
    let bytes_are = if r.backend == BackendKind::Cuda { "the least the work moves" } else { "counted in 32-byte sectors by the emulator" };
    let _ = writeln!(t, "(bytes: {bytes_are})");
    let _ = writeln!(t, "{:<22} {:>12} {:>12} {:>9} {:>11} {:>11}", "kernel", "GFLOP", "MB", "FLOP/B", "roof GF/s", "got GF/s");
    for p in &r.points {
        let got = p.gflop_per_s().map_or("-".to_string(), |g| format!("{g:.0}"));
        let _ = writeln!(
            t,
            "{:<22} {:>12.3} {:>12.3} {:>9.2} {:>11.0} {:>11}",
            p.name,
            p.flops / 1e9,
            p.bytes / 1e6,
            p.intensity(),
            r.roofs.attainable(p.intensity()),
            got
        );
    }
    t
}
