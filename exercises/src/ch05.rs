//! Chapter 5: memory performance.
//!
//! The same work can run at very different speeds depending on how a warp's accesses land in
//! memory: 32 neighbouring floats are one 128-byte transaction, 32 scattered ones are 32; 32
//! words in 32 different shared-memory banks are one pass, 32 words in one bank are 32 passes.
//! And how many warps an SM keeps busy depends on what each block asks of it. The host code of
//! the two kernels is written for you; the occupancy calculator is all yours.

use gpubook::gpu::{BlockResources, Gpu, LaunchConfig, Result, SmLimits};
use gpubook::kernel;

// ANCHOR: gather_rows
/// Threads per block of `gather_rows.cu`: 8 warps, one output row each.
pub const GATHER_BLOCK: u32 = 256;

/// `out[r] = x[index[r]]` for rows of `hidden` floats (x holds `x.len() / hidden` rows): the
/// gather DeepEP's dispatch does, token rows into the buffer of the rank they go to. One warp
/// per output row.
pub fn gather_rows(gpu: &Gpu, x: &[f32], hidden: usize, index: &[i32]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch05/gather_rows.cu"))?;
    let f = module.load_function("gather_rows")?;
    let stream = gpu.default_stream();
    let rows = index.len();
    let x_d = stream.clone_htod(x)?;
    let index_d = stream.clone_htod(index)?;
    // SAFETY: the kernel writes every element of every output row.
    let mut out_d = unsafe { stream.alloc::<f32>(rows * hidden) }?;
    let warps_per_block = GATHER_BLOCK / 32;
    let cfg = LaunchConfig {
        grid_dim: ((rows as u32).div_ceil(warps_per_block).max(1), 1, 1),
        block_dim: (GATHER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (rows_i, hidden_i) = (rows as i32, hidden as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&index_d).arg(&mut out_d).arg(&rows_i).arg(&hidden_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&out_d)
}
// ANCHOR_END: gather_rows

// ANCHOR: row_sums
/// Rows of the matrix a block of `row_sums.cu` owns (its tile is ROWS_PER_BLOCK × 32).
pub const ROWS_PER_BLOCK: u32 = 32;

/// The sum of each row of a row-major `rows × cols` matrix, through a shared tile: blocks of
/// 32 × 8 threads, one per 32 rows.
pub fn row_sums(gpu: &Gpu, m: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch05/row_sums.cu"))?;
    let f = module.load_function("row_sums")?;
    let stream = gpu.default_stream();
    let m_d = stream.clone_htod(m)?;
    // SAFETY: the kernel writes every row's sum.
    let mut sums_d = unsafe { stream.alloc::<f32>(rows) }?;
    let cfg = LaunchConfig {
        grid_dim: ((rows as u32).div_ceil(ROWS_PER_BLOCK).max(1), 1, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0, // the tile is a static __shared__ array
    };
    let (rows_i, cols_i) = (rows as i32, cols as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&m_d).arg(&mut sums_d).arg(&rows_i).arg(&cols_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&sums_d)
}
// ANCHOR_END: row_sums

// ANCHOR: blocks_per_sm
/// How many blocks of `block` one SM with the limits `sm` holds at once: as many as its warp
/// slots, its block slots, its registers and its shared memory all allow; 0 when not even one
/// block fits (the launch would fail).
///
/// - Warps: a block takes ceil(threads / warp size) warp slots of the SM's max_threads / warp size.
/// - Registers: a warp's registers (registers per thread × warp size) are allocated in multiples
///   of `register_allocation_unit`; the register file is split into `register_file_partitions`
///   equal parts, each holding whole warps. A block also may not need more than
///   `max_registers_per_block`, counting its warps rounded up to a multiple of the partitions;
///   0 registers per thread means no limit.
/// - Shared memory: a block's bytes are allocated in multiples of `shared_memory_allocation_unit`
///   (at most `max_shared_memory_per_block`), and the SM keeps
///   `reserved_shared_memory_per_block` more for each resident block.
pub fn blocks_per_sm(sm: &SmLimits, block: &BlockResources) -> u32 {
    todo!("the smallest of four limits: warp slots, block slots, registers, shared memory")
}
// ANCHOR_END: blocks_per_sm
