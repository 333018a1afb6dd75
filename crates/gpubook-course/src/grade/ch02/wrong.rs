//! Chapter 2's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch02;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, expect_failure, mutant, with_kernel, workspace_kernel};
use gpubook::gpu::{Gpu, LaunchConfig, Result};

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

/// The solution's steps up to the launch; `finish` does the rest, rightly or wrongly.
fn axpy_then(
    finish: impl Fn(&gpubook::gpu::Stream, gpubook::gpu::DeviceSlice<f32>, gpubook::gpu::DeviceSlice<f32>, &mut [f32]) -> Result<()>,
) -> impl Fn(&Gpu, f32, &[f32], &mut [f32]) -> Result<()> {
    move |gpu, a, x, y| {
        let f = gpu.load_module(workspace_kernel("solutions/kernels/ch02/axpy.cu"))?.load_function("axpy")?;
        let stream = gpu.default_stream();
        let x_d = stream.clone_htod(x)?;
        let mut y_d = stream.clone_htod(y)?;
        let n_i = x.len() as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a).arg(&x_d).arg(&mut y_d).arg(&n_i);
        // SAFETY: x_d and y_d hold the n floats of x and y; axpy's i < n guard keeps every thread inside.
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

#[test]
fn normalize_with_bytes_for_elements() {
    expect_failure("normalize_with_bytes_for_elements", &["bytes given as an element count", "in elements of their type"], || {
        ch02::normalize(|gpu: &Gpu, pixels: &[u8]| {
            let f = gpu.load_module(workspace_kernel("solutions/kernels/ch02/to_unit.cu"))?.load_function("to_unit")?;
            let stream = gpu.default_stream();
            let n = pixels.len();
            let pixels_d = stream.clone_htod(pixels)?;
            // cudaMalloc(&out, n * sizeof(float)) carried over: but alloc counts elements.
            // SAFETY: 4n floats where n are needed (the bug): to_unit writes the first n, and the rest read
            // back as poison, a valid f32, in the too-long result the grader reports.
            let mut out_d = unsafe { stream.alloc::<f32>(n * std::mem::size_of::<f32>()) }?;
            let n_i = n as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&pixels_d).arg(&mut out_d).arg(&n_i);
            // SAFETY: pixels_d holds n bytes, out_d 4n floats: to_unit's i < n guard keeps it inside both.
            unsafe { launch.launch(cfg(n)) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}

fn fill_kernel(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(workspace_kernel("solutions/kernels/ch02/fill.cu"))?.load_function("fill")
}

#[test]
fn fill_with_memset() {
    expect_failure("fill_with_memset", &["memset", "sets bytes, not elements"], || {
        ch02::fill(|gpu: &Gpu, n: usize, value: f32| {
            let stream = gpu.default_stream();
            // SAFETY: memset_bytes writes every byte before the copy back reads them.
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
            // SAFETY: the tail the too-small grid misses reads back as poison (a valid f32) for the grader.
            let mut out_d = unsafe { stream.alloc::<f32>(n) }?;
            let n_i = n as i32;
            // n / 256 rounds down: the last partial block (and all of a small n) is left out.
            let config = LaunchConfig { grid_dim: ((n as u32 / 256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out_d).arg(&value).arg(&n_i);
            // SAFETY: out_d holds n floats and fill's i < n guard keeps the (too few) threads inside it.
            unsafe { launch.launch(config) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}

fn smooth_kernel(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(workspace_kernel("solutions/kernels/ch02/smooth.cu"))?.load_function("smooth")
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
                // SAFETY: smooth writes all n values of next before the copy back reads them.
                let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                // SAFETY: cur and next hold n floats; smooth's i < n guard and its clamped neighbours keep
                // every access inside them.
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
                // SAFETY: smooth writes all n values of next before the next step or the copy back.
                let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                // SAFETY: cur and next hold n floats; smooth's i < n guard and its clamped neighbours keep
                // every access inside them.
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
            // SAFETY: each step's smooth writes all n values of next before the device-to-device copy reads
            // them (at k = 0 nothing reads it).
            let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
            for _ in 0..k {
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                // SAFETY: cur and next hold n floats; smooth's i < n guard and its clamped neighbours keep
                // every access inside them.
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
            // SAFETY: smooth writes all n values of next before the copy back reads them (at k = 0 they
            // read back as poison, a valid f32).
            let mut next = unsafe { stream.alloc::<f32>(x.len()) }?;
            // Every step smooths the original again: k launches, one step of work.
            for _ in 0..k {
                let mut launch = stream.launch_builder(&f);
                launch.arg(&cur).arg(&mut next).arg(&n_i);
                // SAFETY: cur and next hold n floats; smooth's i < n guard and its clamped neighbours keep
                // every access inside them.
                unsafe { launch.launch(cfg(x.len())) }?;
            }
            stream.clone_dtoh(&next)
        })
    });
}

#[test]
fn axpy_finished_on_the_host() {
    let idle = mutant("ch02/axpy.cu", &[("if (i < n) y[i] = a * x[i] + y[i];", "(void)i;")]);
    expect_failure("axpy_finished_on_the_host", &["`y` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch02::axpy(|gpu, a, x, y| {
            let before = y.to_vec();
            with_kernel(gpu, "ch02/axpy.cu", idle.clone(), || solutions::ch02::axpy(gpu, a, x, y))?;
            for i in 0..y.len() {
                y[i] = a * x[i] + before[i];
            }
            Ok(())
        })
    });
}

thread_local! {
    static IDLE_TO_UNIT: String = mutant("ch02/to_unit.cu", &[("if (i < n) out[i] = pixels[i] / 255.0f;", "(void)i;")]);
}

#[test]
fn normalize_on_the_host() {
    expect_failure("normalize_on_the_host", &["`out` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch02::normalize(|gpu, pixels| {
            // The copies and a launch, for show, of a kernel that stores nothing.
            with_kernel(gpu, "ch02/to_unit.cu", IDLE_TO_UNIT.with(Clone::clone), || solutions::ch02::normalize(gpu, pixels))?;
            Ok(pixels.iter().map(|&p| p as f32 / 255.0).collect())
        })
    });
}
