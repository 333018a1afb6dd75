//! Chapter 5's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch05;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, expect_failure, expect_failure_on_emulator, mutant, with_kernel};
use gpubook::gpu::{BlockResources, Gpu, Result, SmLimits};

fn gather_with(text: String) -> impl Fn(&Gpu, &[f32], usize, &[i32]) -> Result<Vec<f32>> {
    move |gpu, x, hidden, index| {
        with_kernel(gpu, "ch05/gather_rows.cu", text.clone(), || solutions::ch05::gather_rows(gpu, x, hidden, index))
    }
}

/// One thread a row, walking along it: right values, each lane's loads a row apart.
#[test]
fn gather_a_thread_a_row() {
    let strided = mutant(
        "ch05/gather_rows.cu",
        &[
            ("int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // this warp's row", "int r = blockIdx.x * blockDim.x + threadIdx.x;"),
            ("for (int j = lane; j < hidden; j += 32) {", "(void)lane;\n    for (int j = 0; j < hidden; j++) {"),
        ],
    );
    expect_failure_on_emulator("gather_a_thread_a_row", &["sectors of 32 bytes per warp request", "coalescing"], || {
        ch05::gather_rows(gather_with(strided))
    });
}

/// A kernel that copies nothing, and the gather done on the host.
#[test]
fn gather_on_the_host() {
    let idle = mutant("ch05/gather_rows.cu", &[("dst[j] = src[j];", "(void)dst; (void)src;")]);
    expect_failure("gather_on_the_host", &["`out` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch05::gather_rows(move |gpu: &Gpu, x: &[f32], hidden: usize, index: &[i32]| {
            gather_with(idle.clone())(gpu, x, hidden, index)?;
            Ok(index.iter().flat_map(|&r| x[r as usize * hidden..(r as usize + 1) * hidden].to_vec()).collect())
        })
    });
}

#[test]
fn gather_without_the_row_guard() {
    let unguarded = mutant("ch05/gather_rows.cu", &[("if (r >= rows) return;", "")]);
    expect_failure_on_emulator("gather_without_the_row_guard", &["past the last row"], || ch05::gather_rows(gather_with(unguarded)));
}

fn row_sums_with(text: String) -> impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>> {
    move |gpu, m, rows, cols| with_kernel(gpu, "ch05/row_sums.cu", text.clone(), || solutions::ch05::row_sums(gpu, m, rows, cols))
}

/// The tile without its spare column: right sums, 32-way bank conflicts.
#[test]
fn row_sums_unpadded() {
    let unpadded = mutant("ch05/row_sums.cu", &[("__shared__ float tile[TILE][TILE + 1];", "__shared__ float tile[TILE][TILE];")]);
    expect_failure_on_emulator("row_sums_unpadded", &["passes through the banks", "bank conflicts", "tile[32][33]"], || {
        ch05::row_sums(row_sums_with(unpadded))
    });
}

/// No tile: warp 0's lanes read their rows straight from global memory.
#[test]
fn row_sums_straight_from_global() {
    let direct = mutant(
        "ch05/row_sums.cu",
        &[(
            "for (int j = 0; j < TILE; j++) sum += tile[threadIdx.x][j];",
            "for (int j = 0; j < TILE; j++) { int row = row0 + threadIdx.x, col = c0 + j; \
             if (row < rows && col < cols) sum += m[(size_t)row * cols + col]; }",
        )],
    );
    expect_failure_on_emulator("row_sums_straight_from_global", &["reads of `m`", "coalescing through a shared tile"], || {
        ch05::row_sums(row_sums_with(direct))
    });
}

/// The barrier after the sums taken out: the next tile overwrites what warp 0 still reads.
#[test]
fn row_sums_without_the_second_barrier() {
    let racy = mutant("ch05/row_sums.cu", &[("__syncthreads();  // everyone is done with the tile before the next one overwrites it", "")]);
    expect_failure_on_emulator("row_sums_without_the_second_barrier", &["no warp may overwrite the tile"], || {
        ch05::row_sums(row_sums_with(racy))
    });
}

/// `float sum;` with no first value: wrong sums (the 0xFE pattern in check mode), and the report
/// names the local the compiler saw read before any store.
#[test]
fn row_sums_without_a_first_value() {
    let unset = mutant("ch05/row_sums.cu", &[("float sum = 0.0f;", "float sum;")]);
    expect_failure_on_emulator("row_sums_without_a_first_value", &["the compiler warned", "`sum` may be read"], || {
        ch05::row_sums(row_sums_with(unset))
    });
}

#[test]
fn row_sums_on_the_host() {
    let idle = mutant("ch05/row_sums.cu", &[("sums[row0 + threadIdx.x] = sum;", "(void)sum;")]);
    expect_failure("row_sums_on_the_host", &["`sums` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch05::row_sums(move |gpu: &Gpu, m: &[f32], rows: usize, cols: usize| {
            row_sums_with(idle.clone())(gpu, m, rows, cols)?;
            Ok(m.chunks(cols).map(|r| r.iter().sum()).collect())
        })
    });
}

/// The solution with one rule changed: `change` rewrites the block or the SM it sees.
fn occupancy_with(change: fn(&SmLimits, &BlockResources) -> (SmLimits, BlockResources)) -> impl Fn(&SmLimits, &BlockResources) -> u32 {
    move |sm, block| {
        let (sm, block) = change(sm, block);
        solutions::ch05::blocks_per_sm(&sm, &block)
    }
}

#[test]
fn occupancy_ignoring_registers() {
    let f = occupancy_with(|sm, b| (*sm, BlockResources { registers_per_thread: 0, ..*b }));
    expect_failure("occupancy_ignoring_registers", &["registers", "occupancy"], || ch05::blocks_per_sm(f));
}

#[test]
fn occupancy_ignoring_the_register_file_partitions() {
    let f = occupancy_with(|sm, b| (SmLimits { register_file_partitions: 1, ..*sm }, *b));
    expect_failure("occupancy_ignoring_the_register_file_partitions", &["12 warps a partition"], || ch05::blocks_per_sm(f));
}

#[test]
fn occupancy_ignoring_the_reserved_shared_memory() {
    let f = occupancy_with(|sm, b| (SmLimits { reserved_shared_memory_per_block: 0, ..*sm }, *b));
    expect_failure("occupancy_ignoring_the_reserved_shared_memory", &["reserved", "shared memory"], || ch05::blocks_per_sm(f));
}

#[test]
fn occupancy_ignoring_allocation_units() {
    let f = occupancy_with(|sm, b| (SmLimits { register_allocation_unit: 1, shared_memory_allocation_unit: 1, ..*sm }, *b));
    expect_failure("occupancy_ignoring_allocation_units", &["round up", "occupancy"], || ch05::blocks_per_sm(f));
}

#[test]
fn occupancy_from_threads_alone() {
    let threads_only = |sm: &SmLimits, b: &BlockResources| (sm.max_threads / b.threads.max(1)).min(sm.max_blocks);
    expect_failure("occupancy_from_threads_alone", &["you said", "occupancy"], || ch05::blocks_per_sm(threads_only));
}
