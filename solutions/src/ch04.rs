//! Chapter 4: shared memory and synchronisation.
//!
//! The threads of a block share a small, fast scratchpad (`__shared__` memory) and a barrier
//! (`__syncthreads`). With them a block can load data once and use it many times (tiling),
//! combine its threads' values (reductions), and reorder data on chip so that its accesses to
//! global memory stay coalesced (a transpose). The host code is written for you in this
//! chapter; the kernels are the exercises.

use gpubook::gpu::{Function, Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: tiled_matmul
/// The tile width of `tiled_matmul.cu`: blocks are `TILE × TILE` threads (the kernel's
/// `#define TILE` must say the same).
pub const TILE: u32 = 16;

/// C = A × B for row-major A (`m × k`) and B (`k × n`): C is `m × n`. One thread per element of
/// C, one block per `TILE × TILE` tile of C.
pub fn tiled_matmul(gpu: &Gpu, a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch04/tiled_matmul.cu"))?;
    let f = module.load_function("tiled_matmul")?;
    let stream = gpu.default_stream();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    // SAFETY: the kernel writes every element of c before it is copied back.
    let mut c_d = unsafe { stream.alloc::<f32>(m * n) }?;
    let cfg = LaunchConfig {
        grid_dim: ((n as u32).div_ceil(TILE), (m as u32).div_ceil(TILE), 1), // x: columns of C, y: rows
        block_dim: (TILE, TILE, 1),
        shared_mem_bytes: 0, // the tiles are static __shared__ arrays
    };
    let (m_i, k_i, n_i) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&m_i).arg(&k_i).arg(&n_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&c_d)
}
// ANCHOR_END: tiled_matmul

// ANCHOR: reductions
/// Threads per block of both reductions: a power of two (for the tree) and a multiple of 32
/// (for the warps).
pub const REDUCE_BLOCK: u32 = 256;

/// The sum of `x`, with `reduce_tree.cu`'s shared-memory tree.
pub fn reduce_tree(gpu: &Gpu, x: &[f32]) -> Result<f32> {
    let module = gpu.load_module(kernel!("ch04/reduce_tree.cu"))?;
    let f = module.load_function("reduce_tree")?;
    // The tree works in `partial`, one float per thread of dynamic shared memory.
    sum_in_passes(gpu, &f, x, REDUCE_BLOCK * std::mem::size_of::<f32>() as u32)
}

/// The sum of `x`, with `reduce_warp.cu`'s warp shuffles.
pub fn reduce_warp(gpu: &Gpu, x: &[f32]) -> Result<f32> {
    let module = gpu.load_module(kernel!("ch04/reduce_warp.cu"))?;
    let f = module.load_function("reduce_warp")?;
    sum_in_passes(gpu, &f, x, 0)
}
// ANCHOR_END: reductions

// ANCHOR: passes
/// Sums `x` with a kernel that writes one partial sum per block: launch it on x, then on the
/// block sums, and so on until one value is left. Blocks cannot wait for each other inside a
/// launch, but a launch on a stream starts only when the one before it has finished: the end
/// of a kernel is the barrier for the whole grid.
fn sum_in_passes(gpu: &Gpu, f: &Function, x: &[f32], shared_mem_bytes: u32) -> Result<f32> {
    if x.is_empty() {
        return Ok(0.0);
    }
    let stream = gpu.default_stream();
    let mut values = stream.clone_htod(x)?;
    loop {
        let n = values.len();
        let blocks = n.div_ceil(REDUCE_BLOCK as usize);
        // SAFETY: the kernel writes every block's sum before it is read.
        let mut sums = unsafe { stream.alloc::<f32>(blocks) }?;
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (REDUCE_BLOCK, 1, 1), shared_mem_bytes };
        let n_i = n as i32;
        let mut launch = stream.launch_builder(f);
        launch.arg(&values).arg(&mut sums).arg(&n_i);
        unsafe { launch.launch(cfg) }?;
        values = sums; // the old values are freed, in order, after the launch that read them
        if blocks == 1 {
            return Ok(stream.clone_dtoh(&values)?[0]);
        }
    }
}
// ANCHOR_END: passes

// ANCHOR: transpose
/// The tile width of `transpose.cu`: blocks are `TRANSPOSE_TILE × TRANSPOSE_TILE` threads.
pub const TRANSPOSE_TILE: u32 = 32;

/// The transpose of a row-major `rows × cols` matrix: a `cols × rows` matrix.
pub fn transpose(gpu: &Gpu, m: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch04/transpose.cu"))?;
    let f = module.load_function("transpose")?;
    let stream = gpu.default_stream();
    let in_d = stream.clone_htod(m)?;
    // SAFETY: the kernel writes every element of the transpose before it is copied back.
    let mut out_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
    let t = TRANSPOSE_TILE;
    let cfg = LaunchConfig {
        grid_dim: ((cols as u32).div_ceil(t), (rows as u32).div_ceil(t), 1), // tiles of `m`: x along its rows
        block_dim: (t, t, 1),
        shared_mem_bytes: 0,
    };
    let (rows_i, cols_i) = (rows as i32, cols as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out_d).arg(&rows_i).arg(&cols_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&out_d)
}
// ANCHOR_END: transpose
