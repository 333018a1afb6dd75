//! Kernels that get the numbers without the technique their exercise teaches, each a small
//! mutation of the solution's kernel run by the solution's host code. The emulator's access
//! counts show what they skipped; on a GPU, where nothing counts accesses, the grader says which
//! check it could not make and these answers pass (the tests print a NOTE).

use gpubook::gpu::{BackendKind, Gpu};
use gpubook::testing::device_or_skip;
use gpubook_course::grade::GradeReport;
use gpubook_course::grade::{ch03, ch04, report_of};
use gpubook_course::testing::{mutant, with_kernel};

/// Runs `grader` and checks it fails naming each of `words`, on the emulator; on a GPU, notes
/// that the check needs the emulator's counts.
fn expect_failure_counted(test: &str, words: &[&str], grader: impl FnOnce() -> GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    match report_of(grader) {
        Some(report) => {
            for word in words {
                assert!(report.contains(word), "{test}: the report should say `{word}`:{report}");
            }
            println!("{test}: failed as it should:{report}");
        }
        None if gpu.backend() != BackendKind::Emulator => {
            println!("NOTE {test}: passed on {}: this check needs the emulator's access counts", gpu.info().name)
        }
        None => panic!("{test}: the grader passed a wrong answer"),
    }
}

#[test]
fn grid_stride_done_by_one_thread() {
    let one = mutant(
        "ch03/bias_relu.cu",
        &[(
            "i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride",
            "i = (blockIdx.x == 0 && threadIdx.x == 0) ? 0 : n; i < n; i++",
        )],
    );
    expect_failure_counted("grid_stride_done_by_one_thread", &["one thread read", "its share", "grid-stride loop"], || {
        ch03::bias_relu(|gpu: &Gpu, x, bias, blocks| {
            with_kernel(gpu, "ch03/bias_relu.cu", one.clone(), || solutions::ch03::bias_relu(gpu, x, bias, blocks))
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
