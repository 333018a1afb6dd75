//! Chapter 6: parallel patterns.
//!
//! Three patterns that turn up wherever threads must agree on something: a histogram (many
//! threads adding into few counters), a prefix scan (every element's running total, in
//! log-many parallel steps) and stream compaction (keeping some elements, in order, each at the
//! place a scan gives it). DeepEP's dispatch layout is all three: tokens per expert counted with
//! atomics, offsets from a prefix sum, each token written at its offset.

use gpubook::gpu::{DeviceSlice, Function, Gpu, LaunchConfig, Result, Stream};
use gpubook::kernel;

// ANCHOR: histogram
/// Threads per block of the histogram, and blocks per SM of its grid.
pub const HIST_BLOCK: u32 = 256;
pub const HIST_BLOCKS_PER_SM: u32 = 4;

/// `counts[b]` = how many of `values` equal `b`, for values in `0..bins` (bins ≤ 12,288, so that
/// a block's copy fits in 48 KiB of shared memory): DeepEP counts the tokens bound for each
/// expert this way.
pub fn histogram(gpu: &Gpu, values: &[u32], bins: usize) -> Result<Vec<u32>> {
    let module = gpu.load_module(kernel!("ch06/histogram.cu"))?;
    let f = module.load_function("histogram")?;
    let stream = gpu.default_stream();
    let values_d = stream.clone_htod(values)?;
    let mut counts_d = stream.alloc_zeros::<u32>(bins)?;
    // A grid sized to the device, not to the data: each block then sees many values, and its
    // shared copy of the bins saves many global atomics.
    let most = gpu.info().multiprocessors * HIST_BLOCKS_PER_SM;
    let blocks = (values.len() as u32).div_ceil(HIST_BLOCK).clamp(1, most);
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (HIST_BLOCK, 1, 1), shared_mem_bytes: 4 * bins as u32 };
    let (n, bins_i) = (values.len() as i32, bins as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&values_d).arg(&mut counts_d).arg(&n).arg(&bins_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&counts_d)
}
// ANCHOR_END: histogram

// ANCHOR: block_scan
/// Threads (and elements) per block of the scans.
pub const SCAN_BLOCK: u32 = 256;

/// Each block's inclusive scan of its 256 elements of `x`, and each block's total: what
/// `block_scan.cu`'s `block_scan` computes.
pub fn block_scan(gpu: &Gpu, x: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
    let module = gpu.load_module(kernel!("ch06/block_scan.cu"))?;
    let f = module.load_function("block_scan")?;
    let stream = gpu.default_stream();
    let n = x.len();
    let blocks = n.div_ceil(SCAN_BLOCK as usize).max(1);
    let x_d = stream.clone_htod(x)?;
    // SAFETY: the kernel writes every element of y and every block's total.
    let mut y_d = unsafe { stream.alloc::<u32>(n) }?;
    let mut sums_d = unsafe { stream.alloc::<u32>(blocks) }?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&mut sums_d).arg(&n_i);
    unsafe { launch.launch(one_thread_each(n)) }?;
    Ok((stream.clone_dtoh(&y_d)?, stream.clone_dtoh(&sums_d)?))
}
// ANCHOR_END: block_scan

/// One thread per element, blocks of `SCAN_BLOCK`.
fn one_thread_each(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(SCAN_BLOCK).max(1), 1, 1), block_dim: (SCAN_BLOCK, 1, 1), shared_mem_bytes: 0 }
}

// ANCHOR: scan
/// The inclusive scan of all of `x` (`y[i] = x[0] + ... + x[i]`, wrapping), on the device, from
/// `block_scan.cu`'s two kernels: `block_scan` scans each block and writes its total,
/// `add_block_offsets` adds to each block the total of the blocks before it.
pub fn scan(gpu: &Gpu, x: &[u32]) -> Result<Vec<u32>> {
    let module = gpu.load_module(kernel!("ch06/block_scan.cu"))?;
    let block_scan = module.load_function("block_scan")?;
    let add_offsets = module.load_function("add_block_offsets")?;
    let stream = gpu.default_stream();
    // SOLUTION
    let x_d = stream.clone_htod(x)?;
    // SAFETY: scan_on_device writes every element.
    let mut y_d = unsafe { stream.alloc::<u32>(x.len()) }?;
    scan_on_device(&stream, &block_scan, &add_offsets, &x_d, &mut y_d)?;
    stream.clone_dtoh(&y_d)
    // STUB
    // todo!(
    //     "scan each block (block_scan), scan the block totals (the same way: they may fill many blocks), add each block's offset (add_block_offsets)"
    // )
    // END SOLUTION
}
// ANCHOR_END: scan
// SOLUTION
/// y = the inclusive scan of x: scan the blocks, scan their totals (by the same function, so
/// that any number of blocks works: 256 blocks' totals fit one block, 65,536 need two levels),
/// then add the offsets. The totals never leave the device.
fn scan_on_device(stream: &Stream, block_scan: &Function, add: &Function, x: &DeviceSlice<u32>, y: &mut DeviceSlice<u32>) -> Result<()> {
    let n = x.len();
    let blocks = n.div_ceil(SCAN_BLOCK as usize).max(1);
    // SAFETY: block_scan writes every block's total.
    let mut sums = unsafe { stream.alloc::<u32>(blocks) }?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(block_scan);
    launch.arg(x).arg(&mut *y).arg(&mut sums).arg(&n_i);
    unsafe { launch.launch(one_thread_each(n)) }?;
    if blocks > 1 {
        // SAFETY: the recursive call writes every element.
        let mut scanned = unsafe { stream.alloc::<u32>(blocks) }?;
        scan_on_device(stream, block_scan, add, &sums, &mut scanned)?;
        let mut launch = stream.launch_builder(add);
        launch.arg(&mut *y).arg(&scanned).arg(&n_i);
        unsafe { launch.launch(one_thread_each(n)) }?;
    }
    Ok(())
}
// END SOLUTION

// ANCHOR: tokens_for_expert
/// The indices `i` with `experts[i] == expert`, in order: the tokens one expert receives.
/// Three launches: `count_kept` (each block's count), `scan_counts` (their exclusive scan, so
/// block b knows where its tokens start) and `compact` (each kept token to its place).
pub fn tokens_for_expert(gpu: &Gpu, experts: &[u32], expert: u32) -> Result<Vec<u32>> {
    let module = gpu.load_module(kernel!("ch06/compact.cu"))?;
    let (count, scan_counts, compact) =
        (module.load_function("count_kept")?, module.load_function("scan_counts")?, module.load_function("compact")?);
    let stream = gpu.default_stream();
    let n = experts.len();
    let blocks = n.div_ceil(SCAN_BLOCK as usize).max(1);
    let experts_d = stream.clone_htod(experts)?;
    // SAFETY: count_kept writes every block's count; scan_counts every offset and the total.
    let mut counts = unsafe { stream.alloc::<u32>(blocks) }?;
    let mut offsets = unsafe { stream.alloc::<u32>(blocks) }?;
    let mut total = unsafe { stream.alloc::<u32>(1) }?;
    // At most n tokens are kept; compact writes the first `total` of them.
    let mut tokens = unsafe { stream.alloc::<u32>(n.max(1)) }?;
    let (n_i, blocks_i) = (n as i32, blocks as i32);

    let mut launch = stream.launch_builder(&count);
    launch.arg(&experts_d).arg(&mut counts).arg(&n_i).arg(&expert);
    unsafe { launch.launch(one_thread_each(n)) }?;
    let mut launch = stream.launch_builder(&scan_counts);
    launch.arg(&counts).arg(&mut offsets).arg(&mut total).arg(&blocks_i);
    unsafe { launch.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }) }?;
    let mut launch = stream.launch_builder(&compact);
    launch.arg(&experts_d).arg(&offsets).arg(&mut tokens).arg(&n_i).arg(&expert);
    unsafe { launch.launch(one_thread_each(n)) }?;

    // A total past n can only come from wrong counts; reading no further than the buffer keeps
    // the copy valid, and the tokens then say what went wrong.
    let kept = (stream.clone_dtoh(&total)?[0] as usize).min(n);
    stream.clone_dtoh(&tokens.slice(..kept))
}
// ANCHOR_END: tokens_for_expert
