//! What the emulator's check mode counts, for the book's figures and tables of chapters 5 and 6:
//! sectors per warp request against the stride between lanes, passes through the shared-memory
//! banks against a tile's padding, and the work and depth of three block scans. Counting needs
//! the emulator whatever device is present, so these run on [`counting_emulator`]: real runs of
//! the kernels, counted, never timed.

use super::perf::Counted;
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};

/// An emulated device in check mode (the one that counts), whatever `GPUBOOK_BACKEND` says.
pub fn counting_emulator() -> Result<Gpu> {
    let mut config = EmuConfig::from_env();
    config.mode = Mode::Check;
    Gpu::emulated(0, config)
}

/// How a warp's loads land at one stride.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StridePoint {
    /// Floats between the addresses of neighbouring lanes.
    pub stride: usize,
    pub sectors_per_request: f64,
    /// Bytes used of the bytes the sectors move.
    pub efficiency: f64,
}

/// `strided_read` (kernels/perf/memory.cu) at each stride: 256 threads, each loading one float at
/// `t * stride`; the loads of `x` as the emulator counted them.
pub fn sectors_by_stride(gpu: &Gpu, strides: &[usize]) -> Result<Vec<StridePoint>> {
    let f = gpu.load_module(Source::library("perf/memory.cu"))?.load_function("strided_read")?;
    let stream = gpu.default_stream();
    let threads = 256usize;
    let mut points = Vec::new();
    for &stride in strides {
        let x = stream.clone_htod(&vec![1.0f32; threads * stride.max(1)])?;
        let mut sum = stream.alloc_zeros::<f32>(threads)?;
        let (t, s, per) = (threads as i32, stride as i32, 1i32);
        gpu.clear_trace()?;
        let mut l = stream.launch_builder(&f);
        l.arg(&x).arg(&mut sum).arg(&t).arg(&s).arg(&per);
        // SAFETY: x holds threads × stride floats (at least threads), sum one float per thread;
        // each of the 256 threads reads x[t × stride] and writes sum[t].
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: 0 }) }?;
        let trace = gpu.trace()?;
        let counts = trace.launches().last().and_then(|op| op.access_counts()).ok_or_else(no_counts)?;
        let loads = counts.buffers.iter().find(|b| b.label == "x").map(|b| b.loads).unwrap_or(counts.global.loads);
        points.push(StridePoint { stride, sectors_per_request: loads.sectors_per_request(), efficiency: loads.efficiency() });
    }
    Ok(points)
}

/// The most padding `tile_columns`' tile (32 × 40 floats) has room for.
pub const MAX_PAD: u32 = 8;

/// Passes through the banks per warp request when 32 warps each read a column of a
/// 32 × (32 + pad) float tile (`tile_columns`), for each padding (at most [`MAX_PAD`]).
pub fn passes_by_padding(gpu: &Gpu, pads: &[u32]) -> Result<Vec<(u32, f64)>> {
    if let Some(pad) = pads.iter().find(|&&p| p > MAX_PAD) {
        return Err(gpubook::gpu::GpuError::Size(format!("a padding of {pad} words: the tile has room for {MAX_PAD} at most")));
    }
    let f = gpu.load_module(Source::library("perf/memory.cu"))?.load_function("tile_columns")?;
    let stream = gpu.default_stream();
    let mut out = stream.alloc_zeros::<f32>(1024)?;
    let mut rows = Vec::new();
    for &pad in pads {
        let p = pad as i32;
        gpu.clear_trace()?;
        let mut l = stream.launch_builder(&f);
        l.arg(&mut out).arg(&p);
        // SAFETY: out holds one float per thread of the 1024-thread block; the kernel's 32 × 40
        // tile fits pads up to MAX_PAD, checked above.
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }) }?;
        let trace = gpu.trace()?;
        let c = trace.launches().last().and_then(|op| op.access_counts()).ok_or_else(no_counts)?;
        let loads = c.shared.loads;
        rows.push((pad, loads.wavefronts as f64 / loads.requests.max(1) as f64));
    }
    Ok(rows)
}

/// The table of [`passes_by_padding`] in markdown.
pub fn passes_table(rows: &[(u32, f64)]) -> String {
    let mut t = String::from("| tile | words between a column's floats | passes per warp request |\n|---|---:|---:|\n");
    for (pad, passes) in rows {
        t += &format!("| `float tile[32][{}]` | {} | {passes:.0} |\n", 32 + pad, 32 + pad);
    }
    t
}

/// One block scan's cost in one block of 256 elements.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanWork {
    pub name: &'static str,
    /// `__syncthreads()` a thread passed: the steps the block took together.
    pub barriers: u64,
    /// Shared-memory loads and stores of the whole block (thread by thread).
    pub shared_accesses: u64,
    pub counted: Counted,
}

/// Kogge-Stone and Brent-Kung in shared memory, and the two-level shuffle scan, on one block of
/// 256 values (kernels/perf/block_scans.cu and scan.cu), each checked against the host.
pub fn scan_work(gpu: &Gpu) -> Result<Vec<ScanWork>> {
    let n = 256usize;
    let stream = gpu.default_stream();
    let x: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
    let want = super::perf::inclusive_scan(&x);
    let x_d = stream.clone_htod(&x)?;
    let mut y = stream.alloc_zeros::<u32>(n)?;
    let mut sums = stream.alloc_zeros::<u32>(1)?;
    let n_i = n as i32;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (n as u32, 1, 1), shared_mem_bytes: 0 };
    let mut rows = Vec::new();
    for (name, file, kernel) in [
        ("Kogge-Stone, shared memory", "perf/block_scans.cu", "scan_kogge_stone"),
        ("Brent-Kung, shared memory", "perf/block_scans.cu", "scan_brent_kung"),
        ("warp shuffles, two levels", "perf/scan.cu", "scan_blocks"),
    ] {
        let f = gpu.load_module(Source::library(file))?.load_function(kernel)?;
        gpu.clear_trace()?;
        let mut l = stream.launch_builder(&f);
        l.arg(&x_d).arg(&mut y).arg(&mut sums).arg(&n_i);
        // SAFETY: x_d and y hold 256 u32s, one per thread of the single 256-thread block, and
        // sums the one block total; the kernels' shared arrays hold 1024.
        unsafe { l.launch(cfg) }?;
        if stream.clone_dtoh(&y)? != want {
            return Err(gpubook::gpu::GpuError::Driver { call: "scan_work", message: format!("{kernel} scanned wrongly") });
        }
        let trace = gpu.trace()?;
        let c = trace.launches().last().and_then(|op| op.access_counts()).ok_or_else(no_counts)?;
        let counted = Counted::of([Some(c)]).ok_or_else(no_counts)?;
        // Thread-level accesses: every one here moves 4 bytes.
        let shared = (c.shared.loads.bytes + c.shared.stores.bytes) / 4;
        rows.push(ScanWork { name, barriers: c.per_thread_max.barriers, shared_accesses: shared, counted });
    }
    Ok(rows)
}

/// The table of [`scan_work`] in markdown.
pub fn scan_work_table(rows: &[ScanWork]) -> String {
    let mut t = String::from("| block scan of 256 values | barriers | shared-memory accesses | bank conflicts |\n|---|---:|---:|---:|\n");
    for r in rows {
        t += &format!("| {} | {} | {} | {:.2} a request |\n", r.name, r.barriers, r.shared_accesses, r.counted.conflicts_per_request);
    }
    t
}

fn no_counts() -> gpubook::gpu::GpuError {
    gpubook::gpu::GpuError::Driver {
        call: "access counts",
        message: "the launch was not counted (the emulator's check mode counts)".into(),
    }
}
