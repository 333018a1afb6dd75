//! Chapter 1's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes; kernels wrong in ways no mutation reads well are in wrong/ beside this file.

use crate::grade::ch01;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, expect_failure, mutant, with_kernel, workspace_kernel};
use gpubook::gpu::{BackendKind, Gpu, LaunchConfig, Result, Source};
use gpubook::testing::device_or_skip;

fn who_am_i_with(path: &'static str) -> impl Fn(&Gpu, usize, u32) -> Result<(Vec<i32>, Vec<i32>)> {
    move |gpu, n, block| {
        let f = gpu.load_module(workspace_kernel(path))?.load_function("who_am_i")?;
        let stream = gpu.default_stream();
        // SAFETY: a slot a wrong kernel skips reads back as poison (-1), a valid i32 the grader reports.
        let mut block_d = unsafe { stream.alloc::<i32>(n) }?;
        // SAFETY: as for block_d: an unwritten slot reads back as poison (-1), which the grader reports.
        let mut thread_d = unsafe { stream.alloc::<i32>(n) }?;
        block_d.set_label("block");
        thread_d.set_label("thread");
        let config = LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let n_i = n as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut block_d).arg(&mut thread_d).arg(&n_i);
        // SAFETY: block_d and thread_d hold n ints. Two kernels keep the i < n guard; the no-guard one
        // (wrong on purpose) runs only on the emulator, whose check mode stops its first store past n.
        unsafe { launch.launch(config) }?;
        Ok((stream.clone_dtoh(&block_d)?, stream.clone_dtoh(&thread_d)?))
    }
}

#[test]
fn who_am_i_with_thread_index_only() {
    let report = expect_failure("who_am_i_with_thread_index_only", &["blockIdx.x * blockDim.x + threadIdx.x"], || {
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/src/grade/ch01/wrong/who_am_i_thread_only.cu"))
    });
    // The emulator catches two blocks writing one slot as it happens; a GPU leaves the later
    // blocks' slots unwritten, and the grader says that instead.
    if let Some(report) = report {
        let said = ["threads of two different blocks wrote the same slot", "the blocks after the first need slots of their own"];
        assert!(said.iter().any(|s| report.contains(s)), "the report should say what went wrong with the index:{report}");
    }
}

#[test]
fn who_am_i_with_grid_dim_for_block_dim() {
    expect_failure("who_am_i_with_grid_dim_for_block_dim", &["blockIdx.x * blockDim.x + threadIdx.x"], || {
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/src/grade/ch01/wrong/who_am_i_grid_dim.cu"))
    });
}

#[test]
fn who_am_i_without_the_guard() {
    let Some(gpu) = device_or_skip("who_am_i_without_the_guard") else { return };
    if gpu.backend() != BackendKind::Emulator {
        // A GPU rounds allocations up, so the stray writes land in memory nobody checks.
        println!("SKIPPED who_am_i_without_the_guard: only the emulator catches out-of-bounds writes");
        return;
    }
    expect_failure("who_am_i_without_the_guard", &["i >= n must do nothing"], || {
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/src/grade/ch01/wrong/who_am_i_no_guard.cu"))
    });
}

fn hello(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(workspace_kernel("solutions/kernels/ch01/hello.cu"))?.load_function("hello")
}

#[test]
fn first_launch_with_grid_and_block_swapped() {
    expect_failure("first_launch_with_grid_and_block_swapped", &["swapped", "grid_dim is the number of blocks"], || {
        ch01::first_launch(|gpu: &Gpu, grid: u32, block: u32| {
            let f = hello(gpu)?;
            let stream = gpu.default_stream();
            // SAFETY: either way round the launch has grid × block threads, and hello writes one slot each.
            let mut out = unsafe { stream.alloc::<i32>(grid as usize * block as usize) }?;
            let config = LaunchConfig { grid_dim: (block, 1, 1), block_dim: (grid, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out);
            // SAFETY: out holds grid × block ints; the swapped launch starts as many threads, one a slot.
            unsafe { launch.launch(config) }?;
            stream.clone_dtoh(&out)
        })
    });
}

#[test]
fn first_launch_that_forgets_its_buffer() {
    expect_failure("first_launch_that_forgets_its_buffer", &["never freed", "cudaFree"], || {
        ch01::first_launch(|gpu: &Gpu, grid: u32, block: u32| {
            let f = hello(gpu)?;
            let stream = gpu.default_stream();
            // SAFETY: hello writes all grid × block slots, one per thread, before the copy back reads them.
            let mut out = unsafe { stream.alloc::<i32>(grid as usize * block as usize) }?;
            let config = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out);
            // SAFETY: out holds grid × block ints, one per thread (the leak that follows is the bug).
            unsafe { launch.launch(config) }?;
            let host = stream.clone_dtoh(&out)?;
            std::mem::forget(out);
            Ok(host)
        })
    });
}

/// who_am_i's kernel with its stores taken out, and the answer worked out on the host.
#[test]
fn who_am_i_computed_on_the_host() {
    let idle = mutant("ch01/who_am_i.cu", &[("block[i] = blockIdx.x;", ""), ("thread[i] = threadIdx.x;", "")]);
    expect_failure("who_am_i_computed_on_the_host", &["`block` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch01::who_am_i(|gpu, n, block| {
            with_kernel(gpu, "ch01/who_am_i.cu", idle.clone(), || solutions::ch01::who_am_i(gpu, n, block))?;
            let b = block as usize;
            Ok(((0..n).map(|i| (i / b) as i32).collect(), (0..n).map(|i| (i % b) as i32).collect()))
        })
    });
}

/// The host computes `out`, uploads it and has a kernel that stores nothing "touch" it.
#[test]
fn first_launch_uploaded_from_the_host() {
    expect_failure("first_launch_uploaded_from_the_host", &["where the exercise gives no data to copy", KERNEL_DOES_THE_WORK], || {
        ch01::first_launch(|gpu, grid, block| {
            let f = gpu
                .load_module(Source::text("touch.cu", "extern \"C\" __global__ void hello(int* out) { (void)out; }"))?
                .load_function("hello")?;
            let stream = gpu.default_stream();
            let b = block as usize;
            let out: Vec<i32> = (0..grid as usize * b).map(|i| ((i / b) * 10000 + i % b) as i32).collect();
            let mut out_d = stream.clone_htod(&out)?;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out_d);
            // SAFETY: this kernel stores nothing (it only names `out`), and out_d holds grid × block ints.
            unsafe { launch.launch(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}
