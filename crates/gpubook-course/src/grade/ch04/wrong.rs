//! Chapter 4's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes; kernels wrong in ways no mutation reads well are in wrong/ beside this file.

use crate::grade::ch04;
use crate::grade::testing::{
    KERNEL_DOES_THE_WORK, Shows, cfg_2d, expect_failure, expect_failure_counted, expect_failure_showing, mutant, with_kernel, wrong_kernel,
};
use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};

/// tiled_matmul's host code (given to the learner), with the kernel from `source`.
fn tiled_matmul(source: &Source, gpu: &Gpu, a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Result<Vec<f32>> {
    let f = gpu.load_module(source.clone())?.load_function("tiled_matmul")?;
    let stream = gpu.default_stream();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    // SAFETY: the grid covers m × n, and both kernels store every element of c before it is read.
    let mut c_d = unsafe { stream.alloc::<f32>(m * n) }?;
    let (m_i, k_i, n_i) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&m_i).arg(&k_i).arg(&n_i);
    // SAFETY: a, b, c hold m × k, k × n, m × n floats; the one-sync kernel guards every access (its race
    // changes values only). The no-padding one reads past a and b on purpose: the emulator's check mode
    // stops it there; on a GPU that is undefined.
    unsafe { launch.launch(cfg_2d(((n as u32).div_ceil(16), (m as u32).div_ceil(16)), (16, 16))) }?;
    stream.clone_dtoh(&c_d)
}

#[test]
fn tiled_matmul_with_one_barrier_per_tile() {
    expect_failure_showing("tiled_matmul_with_one_barrier_per_tile", Shows::OnTheEmulator, &["__syncthreads"], || {
        let source = wrong_kernel("ch04/tiled_matmul_one_sync.cu");
        ch04::tiled_matmul(|gpu, a, b, m, k, n| tiled_matmul(&source, gpu, a, b, m, k, n))
    });
}

#[test]
fn tiled_matmul_without_zero_padding() {
    expect_failure_showing("tiled_matmul_without_zero_padding", Shows::Everywhere, &["zero"], || {
        let source = wrong_kernel("ch04/tiled_matmul_no_padding.cu");
        ch04::tiled_matmul(|gpu, a, b, m, k, n| tiled_matmul(&source, gpu, a, b, m, k, n))
    });
}

/// The reductions' host code: passes of 256-thread blocks until one value is left.
fn reduce(source: Source, kernel: &'static str, shared_mem_bytes: u32) -> impl Fn(&Gpu, &[f32]) -> Result<f32> {
    move |gpu, x| {
        let f = gpu.load_module(source.clone())?.load_function(kernel)?;
        let stream = gpu.default_stream();
        let mut values = stream.clone_htod(x)?;
        loop {
            let blocks = values.len().div_ceil(256);
            // SAFETY: every block writes its sum before the next pass or the copy back reads it.
            let mut sums = unsafe { stream.alloc::<f32>(blocks) }?;
            let n = values.len() as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&values).arg(&mut sums).arg(&n);
            // SAFETY: values holds n floats, read only where i < n, and sums one per block; reduce_tree's
            // partial gets 256 floats of shared memory. The wrong kernels (a missing barrier, offsets from
            // 32) get values wrong, not addresses.
            unsafe { launch.launch(LaunchConfig { shared_mem_bytes, ..cfg_2d((blocks as u32, 1), (256, 1)) }) }?;
            values = sums;
            if blocks == 1 {
                return Ok(stream.clone_dtoh(&values)?[0]);
            }
        }
    }
}

#[test]
fn reduce_tree_without_barriers_between_steps() {
    expect_failure_showing("reduce_tree_without_barriers_between_steps", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::reduce_tree(reduce(wrong_kernel("ch04/reduce_tree_no_sync.cu"), "reduce_tree", 256 * 4))
    });
}

#[test]
fn reduce_warp_with_shuffle_offsets_from_32() {
    expect_failure_showing(
        "reduce_warp_with_shuffle_offsets_from_32",
        Shows::Everywhere,
        &["times too large", "offsets 16, 8, 4, 2, 1"],
        || ch04::reduce_warp(reduce(wrong_kernel("ch04/reduce_warp_offset_32.cu"), "reduce_warp", 0)),
    );
}

#[test]
fn reduce_warp_without_a_barrier_before_warp_0_reads() {
    expect_failure_showing("reduce_warp_without_a_barrier_before_warp_0_reads", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::reduce_warp(reduce(wrong_kernel("ch04/reduce_warp_no_sync.cu"), "reduce_warp", 0))
    });
}

fn transpose(source: Source) -> impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>> {
    move |gpu, m, rows, cols| {
        let f = gpu.load_module(source.clone())?.load_function("transpose")?;
        let stream = gpu.default_stream();
        let in_d = stream.clone_htod(m)?;
        // SAFETY: an element left unwritten reads back as poison (a valid f32), which the grader reports.
        let mut out_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
        let (r, c) = (rows as i32, cols as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&in_d).arg(&mut out_d).arg(&r).arg(&c);
        // SAFETY: in_d and out_d hold rows × cols floats. transpose_no_sync's guards keep it inside (its
        // race changes values); the input-guard one can store past out when rows > cols: the emulator's
        // check mode stops it there; on a GPU, undefined.
        unsafe { launch.launch(cfg_2d(((cols as u32).div_ceil(32), (rows as u32).div_ceil(32)), (32, 32))) }?;
        stream.clone_dtoh(&out_d)
    }
}

#[test]
fn transpose_without_a_barrier() {
    expect_failure_showing("transpose_without_a_barrier", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::transpose(transpose(wrong_kernel("ch04/transpose_no_sync.cu")))
    });
}

#[test]
fn transpose_guarding_the_write_with_the_input_sizes() {
    expect_failure_showing("transpose_guarding_the_write_with_the_input_sizes", Shows::Everywhere, &["x' < rows"], || {
        ch04::transpose(transpose(wrong_kernel("ch04/transpose_input_guard.cu")))
    });
}

#[test]
fn transpose_on_the_host() {
    expect_failure("transpose_on_the_host", &["came back exactly as it had been copied to the device", KERNEL_DOES_THE_WORK], || {
        ch04::transpose(|gpu, m, rows, cols| {
            solutions::ch04::transpose(gpu, m, rows, cols)?;
            let mut t = vec![0.0f32; rows * cols];
            for r in 0..rows {
                for c in 0..cols {
                    t[c * rows + r] = m[r * cols + c];
                }
            }
            // A copy of the right answer is still the host's answer: send it round the device.
            let stream = gpu.default_stream();
            let t_d = stream.clone_htod(&t)?;
            stream.clone_dtoh(&t_d)
        })
    });
}

/// The tree's kernel reports 0 for every block, and the host sums x itself.
#[test]
fn reduction_finished_on_the_host() {
    let zero = mutant("ch04/reduce_tree.cu", &[("block_sums[blockIdx.x] = partial[0];", "block_sums[blockIdx.x] = 0.0f;")]);
    expect_failure("reduction_finished_on_the_host", &["`the sum` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch04::reduce_tree(|gpu, x| {
            with_kernel(gpu, "ch04/reduce_tree.cu", zero.clone(), || solutions::ch04::reduce_tree(gpu, x))?;
            Ok(x.iter().map(|&v| v as f64).sum::<f64>() as f32)
        })
    });
}

#[test]
fn matmul_without_the_tiles() {
    let naive = mutant(
        "ch04/tiled_matmul.cu",
        &[(
            "for (int t = 0; t < (k + TILE - 1) / TILE; t++) {",
            "for (int j = 0; row < m && col < n && j < k; j++) sum += a[row * k + j] * b[j * n + col];\n    for (int t = 0; t < 0; t++) {",
        )],
    );
    expect_failure_counted("matmul_without_the_tiles", &["from global memory", "tiling"], || {
        ch04::tiled_matmul(|gpu: &Gpu, a, b, m, k, n| {
            with_kernel(gpu, "ch04/tiled_matmul.cu", naive.clone(), || solutions::ch04::tiled_matmul(gpu, a, b, m, k, n))
        })
    });
}

#[test]
fn reduction_by_thread_zero_alone() {
    let serial = mutant(
        "ch04/reduce_tree.cu",
        &[(
            "for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {",
            "if (t == 0) for (int j = 1; j < blockDim.x; j++) partial[0] += partial[j];\n    for (int stride = 0; stride > 0; stride /= 2) {",
        )],
    );
    expect_failure_counted("reduction_by_thread_zero_alone", &["one thread made", "log2"], || {
        ch04::reduce_tree(|gpu: &Gpu, x| with_kernel(gpu, "ch04/reduce_tree.cu", serial.clone(), || solutions::ch04::reduce_tree(gpu, x)))
    });
}

#[test]
fn warp_sum_through_shared_memory() {
    let shared = mutant(
        "ch04/reduce_warp.cu",
        &[
            (
                "for (int offset = 16; offset > 0; offset /= 2) {",
                "__shared__ float lanes[1024];\n    for (int offset = 16; offset > 0; offset /= 2) {",
            ),
            (
                "v += __shfl_down_sync(0xffffffffu, v, offset);",
                "lanes[threadIdx.x] = v; __syncwarp(); if (threadIdx.x % 32 + offset < 32) v += lanes[threadIdx.x + offset]; __syncwarp();",
            ),
        ],
    );
    expect_failure_counted("warp_sum_through_shared_memory", &["went through shared memory", "__shfl_down_sync"], || {
        ch04::reduce_warp(|gpu: &Gpu, x| with_kernel(gpu, "ch04/reduce_warp.cu", shared.clone(), || solutions::ch04::reduce_warp(gpu, x)))
    });
}

#[test]
fn transpose_written_down_columns() {
    let naive = mutant(
        "ch04/transpose.cu",
        &[
            ("x = blockIdx.y * TILE + threadIdx.x;  // column of `out` (a row index of `in`)", "{ int r = y, c = x; x = r; y = c; }"),
            ("y = blockIdx.x * TILE + threadIdx.y;  // row of `out` (a column index of `in`)", ""),
            ("out[y * rows + x] = tile[threadIdx.x][threadIdx.y];", "out[y * rows + x] = tile[threadIdx.y][threadIdx.x];"),
        ],
    );
    expect_failure_counted("transpose_written_down_columns", &["writes to out", "sectors", "coalescing"], || {
        ch04::transpose(|gpu: &Gpu, m, rows, cols| {
            with_kernel(gpu, "ch04/transpose.cu", naive.clone(), || solutions::ch04::transpose(gpu, m, rows, cols))
        })
    });
}
