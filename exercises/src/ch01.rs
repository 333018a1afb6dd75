//! Chapter 1: heterogeneous computing. A CUDA program is two programs: host code on the CPU that
//! owns the data and decides what runs, and kernels on the device that run once per thread.
//!
//! - `who_am_i`: the host code is complete; the exercise is the kernel, in which every thread
//!   works out which element is its own.
//! - `first_launch`: the kernel is complete; the exercise is the host code that launches it.

use gpubook::gpu::{Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: who_am_i
/// Runs the `who_am_i` kernel over `n` slots, `block` threads per block, and returns for each
/// slot `i` the block (`.0[i]`) and the thread within it (`.1[i]`) that claimed it.
///
/// This host code is complete: the exercise is the kernel, `kernels/ch01/who_am_i.cu`.
pub fn who_am_i(gpu: &Gpu, n: usize, block: u32) -> Result<(Vec<i32>, Vec<i32>)> {
    // Compile the kernel for the device: NVRTC on a GPU, the C++ compiler on the emulator.
    let module = gpu.load_module(kernel!("ch01/who_am_i.cu"))?;
    let f = module.load_function("who_am_i")?;
    let stream = gpu.default_stream();

    // Device memory for the results: a kernel cannot write into a host Vec.
    // SAFETY: uninitialised (as cudaMalloc's): we read only what the kernel wrote.
    let mut block_d = unsafe { stream.alloc::<i32>(n) }?;
    let mut thread_d = unsafe { stream.alloc::<i32>(n) }?;
    // Names the emulator's messages use (`block[300]` rather than `buffer #1[300]`).
    block_d.set_label("block");
    thread_d.set_label("thread");

    // Enough blocks that every slot has a thread: ceil(n / block).
    let blocks = (n as u32).div_ceil(block);
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut block_d).arg(&mut thread_d).arg(&n_i);
    // SAFETY: the kernel writes only slots below n, and both buffers hold n.
    unsafe { launch.launch(cfg) }?;

    // Copy the answers home; the device buffers are freed when they go out of scope.
    Ok((stream.clone_dtoh(&block_d)?, stream.clone_dtoh(&thread_d)?))
}
// ANCHOR_END: who_am_i

// ANCHOR: first_launch
// ANCHOR: first_launch_given
/// Launches the `hello` kernel of `kernels/ch01/hello.cu` on `grid` blocks of `block` threads
/// each and returns what it wrote: one `i32` per thread, in global-index order.
pub fn first_launch(gpu: &Gpu, grid: u32, block: u32) -> Result<Vec<i32>> {
    let module = gpu.load_module(kernel!("ch01/hello.cu"))?;
    let f = module.load_function("hello")?;
    let stream = gpu.default_stream();
    // ANCHOR_END: first_launch_given
    todo!("allocate one i32 per thread on the device, describe the launch in a LaunchConfig, launch `f` with it, copy the result back")
}
// ANCHOR_END: first_launch
