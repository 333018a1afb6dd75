//! Chapters 1 and 2's graders against plausible wrong answers: each must fail, and its report must
//! name the idea the mistake misses (a grader that cannot fail is a bug). That the solutions pass
//! is the solutions crate's test. Without a device every test prints SKIPPED.
//!
//! Wrong kernels live under tests/wrong/ch01/; chapter 2's mistakes are host code, run against the
//! chapter's real kernels.

use gpubook::gpu::{BackendKind, Gpu, LaunchConfig, Result, Source};
use gpubook::testing::{device_or_skip, root};
use gpubook_course::grade::{ch01, ch02};
use gpubook_course::testing::expect_failure;

fn kernel(path: &str) -> Source {
    Source::file(root().join(path))
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

// ---- ch01-who-am-i: the exercise's own host code, with a wrong kernel ----

fn who_am_i_with(path: &'static str) -> impl Fn(&Gpu, usize, u32) -> Result<(Vec<i32>, Vec<i32>)> {
    move |gpu, n, block| {
        let f = gpu.load_module(kernel(path))?.load_function("who_am_i")?;
        let stream = gpu.default_stream();
        let mut block_d = unsafe { stream.alloc::<i32>(n) }?;
        let mut thread_d = unsafe { stream.alloc::<i32>(n) }?;
        block_d.set_label("block");
        thread_d.set_label("thread");
        let config = LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let n_i = n as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut block_d).arg(&mut thread_d).arg(&n_i);
        unsafe { launch.launch(config) }?;
        Ok((stream.clone_dtoh(&block_d)?, stream.clone_dtoh(&thread_d)?))
    }
}

#[test]
fn who_am_i_with_thread_index_only() {
    let report = expect_failure("who_am_i_with_thread_index_only", &["blockIdx.x * blockDim.x + threadIdx.x"], || {
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/tests/wrong/ch01/who_am_i_thread_only.cu"))
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
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/tests/wrong/ch01/who_am_i_grid_dim.cu"))
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
        ch01::who_am_i(who_am_i_with("crates/gpubook-course/tests/wrong/ch01/who_am_i_no_guard.cu"))
    });
}

// ---- ch01-first-launch ----

fn hello(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(kernel("solutions/kernels/ch01/hello.cu"))?.load_function("hello")
}

#[test]
fn first_launch_with_grid_and_block_swapped() {
    expect_failure("first_launch_with_grid_and_block_swapped", &["swapped", "grid_dim is the number of blocks"], || {
        ch01::first_launch(|gpu: &Gpu, grid: u32, block: u32| {
            let f = hello(gpu)?;
            let stream = gpu.default_stream();
            let mut out = unsafe { stream.alloc::<i32>(grid as usize * block as usize) }?;
            let config = LaunchConfig { grid_dim: (block, 1, 1), block_dim: (grid, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out);
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
            let mut out = unsafe { stream.alloc::<i32>(grid as usize * block as usize) }?;
            let config = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out);
            unsafe { launch.launch(config) }?;
            let host = stream.clone_dtoh(&out)?;
            std::mem::forget(out);
            Ok(host)
        })
    });
}

// ---- ch02-axpy ----

/// The solution's steps up to the launch; `finish` does the rest, rightly or wrongly.
fn axpy_then(
    finish: impl Fn(&gpubook::gpu::Stream, gpubook::gpu::DeviceSlice<f32>, gpubook::gpu::DeviceSlice<f32>, &mut [f32]) -> Result<()>,
) -> impl Fn(&Gpu, f32, &[f32], &mut [f32]) -> Result<()> {
    move |gpu, a, x, y| {
        let f = gpu.load_module(kernel("solutions/kernels/ch02/axpy.cu"))?.load_function("axpy")?;
        let stream = gpu.default_stream();
        let x_d = stream.clone_htod(x)?;
        let mut y_d = stream.clone_htod(y)?;
        let n_i = x.len() as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a).arg(&x_d).arg(&mut y_d).arg(&n_i);
        unsafe { launch.launch(cfg(x.len())) }?;
        finish(&stream, x_d, y_d, y)
    }
}

#[test]
fn axpy_copying_the_result_the_wrong_way() {
    expect_failure("axpy_copying_the_result_the_wrong_way", &["device→host", "direction"], || {
        // memcpy_htod where memcpy_dtoh belongs: the stale host y overwrites the device's result.
        ch02::axpy(axpy_then(|stream, _x_d, mut y_d, y| stream.memcpy_htod(&*y, &mut y_d)))
    });
}

#[test]
fn axpy_that_leaks_x() {
    expect_failure("axpy_that_leaks_x", &["never freed", "std::mem::forget"], || {
        ch02::axpy(axpy_then(|stream, x_d, y_d, y| {
            stream.memcpy_dtoh(&y_d, y)?;
            std::mem::forget(x_d);
            Ok(())
        }))
    });
}

#[test]
fn axpy_copying_x_back_too() {
    expect_failure("axpy_copying_x_back_too", &["x came back too", "only the output back"], || {
        ch02::axpy(axpy_then(|stream, x_d, y_d, y| {
            stream.memcpy_dtoh(&y_d, y)?;
            let _x_again = stream.clone_dtoh(&x_d)?;
            Ok(())
        }))
    });
}

// ---- ch02-normalize ----

#[test]
fn normalize_with_bytes_for_elements() {
    expect_failure("normalize_with_bytes_for_elements", &["bytes given as an element count", "in elements of their type"], || {
        ch02::normalize(|gpu: &Gpu, pixels: &[u8]| {
            let f = gpu.load_module(kernel("solutions/kernels/ch02/to_unit.cu"))?.load_function("to_unit")?;
            let stream = gpu.default_stream();
            let n = pixels.len();
            let pixels_d = stream.clone_htod(pixels)?;
            // cudaMalloc(&out, n * sizeof(float)) carried over: but alloc counts elements.
            let mut out_d = unsafe { stream.alloc::<f32>(n * std::mem::size_of::<f32>()) }?;
            let n_i = n as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&pixels_d).arg(&mut out_d).arg(&n_i);
            unsafe { launch.launch(cfg(n)) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}

// ---- ch02-fill ----

fn fill_kernel(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(kernel("solutions/kernels/ch02/fill.cu"))?.load_function("fill")
}

#[test]
fn fill_with_memset() {
    expect_failure("fill_with_memset", &["memset", "sets bytes, not elements"], || {
        ch02::fill(|gpu: &Gpu, n: usize, value: f32| {
            let stream = gpu.default_stream();
            let mut out_d = unsafe { stream.alloc::<f32>(n) }?;
            stream.memset_bytes(&mut out_d, value as u8)?;
            stream.clone_dtoh(&out_d)
        })
    });
}

#[test]
fn fill_from_a_host_vector() {
    expect_failure("fill_from_a_host_vector", &["host→device", "kernel argument"], || {
        ch02::fill(|gpu: &Gpu, n: usize, value: f32| {
            let stream = gpu.default_stream();
            let out_d = stream.clone_htod(&vec![value; n])?;
            stream.clone_dtoh(&out_d)
        })
    });
}

#[test]
fn fill_that_launches_too_few_threads() {
    expect_failure("fill_that_launches_too_few_threads", &["never written"], || {
        ch02::fill(|gpu: &Gpu, n: usize, value: f32| {
            let f = fill_kernel(gpu)?;
            let stream = gpu.default_stream();
            let mut out_d = unsafe { stream.alloc::<f32>(n) }?;
            let n_i = n as i32;
            // n / 256 rounds down: the last partial block (and all of a small n) is left out.
            let config = LaunchConfig { grid_dim: ((n as u32 / 256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out_d).arg(&value).arg(&n_i);
            unsafe { launch.launch(config) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}

// ---- ch02-stay-on-device ----

fn smooth_kernel(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(kernel("solutions/kernels/ch02/smooth.cu"))?.load_function("smooth")
}

#[test]
fn smooth_with_a_round_trip_per_step() {
    expect_failure("smooth_with_a_round_trip_per_step", &["went to the host and back", "keep the data on the device"], || {
        ch02::smooth(|gpu: &Gpu, x: &[f32], k: usize| {
            let f = smooth_kernel(gpu)?;
            let stream = gpu.default_stream();
            let n_i = x.len() as i32;
            let mut host = x.to_vec();
            for _ in 0..k {
                let cur = stream.clone_htod(&host)?;
                let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                unsafe { launch.launch(cfg(x.len())) }?;
                host = stream.clone_dtoh(&next)?;
            }
            Ok(host)
        })
    });
}

#[test]
fn smooth_allocating_every_step() {
    expect_failure("smooth_allocating_every_step", &["device buffers were allocated", "allocate the two buffers once"], || {
        ch02::smooth(|gpu: &Gpu, x: &[f32], k: usize| {
            let f = smooth_kernel(gpu)?;
            let stream = gpu.default_stream();
            let n_i = x.len() as i32;
            let mut cur = stream.clone_htod(x)?;
            for _ in 0..k {
                let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                unsafe { launch.launch(cfg(x.len())) }?;
                cur = next;
            }
            stream.clone_dtoh(&cur)
        })
    });
}

#[test]
fn smooth_copying_instead_of_swapping() {
    expect_failure("smooth_copying_instead_of_swapping", &["device→device", "std::mem::swap"], || {
        ch02::smooth(|gpu: &Gpu, x: &[f32], k: usize| {
            let f = smooth_kernel(gpu)?;
            let stream = gpu.default_stream();
            let n_i = x.len() as i32;
            let mut cur = stream.clone_htod(x)?;
            let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
            for _ in 0..k {
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                unsafe { launch.launch(cfg(x.len())) }?;
                stream.memcpy_dtod(&next, &mut cur)?;
            }
            stream.clone_dtoh(&cur)
        })
    });
}

#[test]
fn smooth_that_never_swaps() {
    expect_failure("smooth_that_never_swaps", &["previous step's output"], || {
        ch02::smooth(|gpu: &Gpu, x: &[f32], k: usize| {
            let f = smooth_kernel(gpu)?;
            let stream = gpu.default_stream();
            let n_i = x.len() as i32;
            let cur = stream.clone_htod(x)?;
            let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
            // Every step smooths the original again: k launches, one step of work.
            for _ in 0..k {
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                unsafe { launch.launch(cfg(x.len())) }?;
            }
            stream.clone_dtoh(&next)
        })
    });
}
