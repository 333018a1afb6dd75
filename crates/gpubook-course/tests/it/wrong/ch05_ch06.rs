//! The graders of chapters 5 and 6 against plausible wrong answers, one or more per rule of each
//! grader: each must fail, naming the concept. Kernels are mutations of the solutions' kernels
//! (so they follow the solutions when those change), run by the solutions' host code. Answers
//! that get the numbers while skipping the technique fail on the emulator, whose check mode
//! counts accesses; on a GPU, which counts nothing, those tests print a NOTE (the graders say
//! which check they skipped).

use gpubook::gpu::{BlockResources, Gpu, LaunchConfig, Result, SmLimits, Source};
use gpubook_course::grade::{ch05, ch06};
use gpubook_course::testing::{expect_failure, expect_failure_on_emulator, mutant, with_kernel};

const KERNEL_DOES_THE_WORK: &str = "the kernel does the work";

// ---- ch05-coalesce -----------------------------------------------------------------------------

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

// ---- ch05-padded-tile --------------------------------------------------------------------------

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

// ---- ch05-occupancy ----------------------------------------------------------------------------

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

// ---- ch06-histogram ----------------------------------------------------------------------------

fn histogram_with(text: String) -> impl Fn(&Gpu, &[u32], usize) -> Result<Vec<u32>> {
    move |gpu, values, bins| with_kernel(gpu, "ch06/histogram.cu", text.clone(), || solutions::ch06::histogram(gpu, values, bins))
}

/// "Privatised" in name only: every value is still an atomic on global memory.
#[test]
fn histogram_with_every_atomic_global() {
    let global = mutant("ch06/histogram.cu", &[("atomicAdd(&local[values[i]], 1u);", "atomicAdd(&counts[values[i]], 1u);")]);
    expect_failure_on_emulator("histogram_with_every_atomic_global", &["on global memory", "privatisation"], || {
        ch06::histogram(histogram_with(global))
    });
}

#[test]
fn histogram_without_zeroed_bins() {
    let garbage = mutant("ch06/histogram.cu", &[("for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;", "")]);
    expect_failure_on_emulator("histogram_without_zeroed_bins", &["zero every one of them"], || ch06::histogram(histogram_with(garbage)));
}

#[test]
fn histogram_merged_before_the_block_is_done() {
    let racy = mutant("ch06/histogram.cu", &[("__syncthreads();  // the block's counts are complete", "")]);
    expect_failure_on_emulator("histogram_merged_before_the_block_is_done", &["another before merging"], || {
        ch06::histogram(histogram_with(racy))
    });
}

#[test]
fn histogram_on_the_host() {
    let idle = mutant("ch06/histogram.cu", &[("if (local[b] != 0) atomicAdd(&counts[b], local[b]);", "")]);
    expect_failure("histogram_on_the_host", &["none of the inputs (values)", KERNEL_DOES_THE_WORK], || {
        ch06::histogram(move |gpu: &Gpu, values: &[u32], bins: usize| {
            let mut counts = vec![0u32; bins];
            for &v in values {
                counts[v as usize] += 1;
            }
            // Sent up and back down, as if the kernel had counted.
            with_kernel(gpu, "ch06/histogram.cu", idle.clone(), || solutions::ch06::histogram(gpu, values, bins))?;
            let stream = gpu.default_stream();
            stream.clone_dtoh(&stream.clone_htod(&counts)?)
        })
    });
}

// ---- ch06-block-scan ---------------------------------------------------------------------------

/// Scanned values and block sums.
type Scanned = Result<(Vec<u32>, Vec<u32>)>;

fn block_scan_with(text: String) -> impl Fn(&Gpu, &[u32]) -> Scanned {
    move |gpu, x| with_kernel(gpu, "ch06/block_scan.cu", text.clone(), || solutions::ch06::block_scan(gpu, x))
}

/// Thread 0 scans the block alone in shared memory.
#[test]
fn block_scan_by_one_thread() {
    let serial = mutant(
        "ch06/block_scan.cu",
        &[
            (
                "unsigned v = warp_scan(i < n ? x[i] : 0u);",
                "__shared__ unsigned all[1024];\n    all[threadIdx.x] = i < n ? x[i] : 0u;\n    __syncthreads();\n    \
                 if (threadIdx.x == 0) for (int k = 1; k < blockDim.x; k++) all[k] += all[k - 1];\n    __syncthreads();\n    \
                 unsigned v = all[threadIdx.x];\n    if (false) v = warp_scan(v);",
            ),
            ("if (warp > 0) v += warp_totals[warp - 1];  // everything in the warps before this one", ""),
        ],
    );
    expect_failure_on_emulator("block_scan_by_one_thread", &["it scanned the block alone", "__shfl_up_sync"], || {
        ch06::block_scan(block_scan_with(serial))
    });
}

/// Kogge-Stone through shared memory instead of shuffles: right, but every step a round trip.
#[test]
fn block_scan_through_shared_memory() {
    let shared = mutant(
        "ch06/block_scan.cu",
        &[
            (
                "int lane = threadIdx.x % 32;\n    // SOLUTION",
                "int lane = threadIdx.x % 32;\n    __shared__ unsigned lanes[1024];\n    // SOLUTION",
            ),
            (
                "unsigned up = __shfl_up_sync(0xffffffffu, v, d);  // lane l - d's value (lanes < d get their own)",
                "lanes[threadIdx.x] = v; __syncwarp(); unsigned up = lane >= d ? lanes[threadIdx.x - d] : 0u; __syncwarp();",
            ),
        ],
    );
    expect_failure_on_emulator("block_scan_through_shared_memory", &["went through shared memory step by step"], || {
        ch06::block_scan(block_scan_with(shared))
    });
}

/// Every lane adds what comes up, lanes below d included (they get their own value back).
#[test]
fn block_scan_adding_in_every_lane() {
    let doubled = mutant("ch06/block_scan.cu", &[("if (lane >= d) v += up;", "v += up;")]);
    expect_failure("block_scan_adding_in_every_lane", &["y[", "x[b0] + ... + x[i]"], || ch06::block_scan(block_scan_with(doubled)));
}

#[test]
fn block_scan_on_the_host() {
    let idle = mutant("ch06/block_scan.cu", &[("if (i < n) y[i] = v;", "")]);
    expect_failure("block_scan_on_the_host", &["`y` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch06::block_scan(move |gpu: &Gpu, x: &[u32]| {
            let (_, sums) = block_scan_with(idle.clone())(gpu, x)?;
            let mut y = Vec::new();
            for chunk in x.chunks(256) {
                let mut s = 0u32;
                y.extend(chunk.iter().map(|&v| {
                    s = s.wrapping_add(v);
                    s
                }));
            }
            Ok((y, sums))
        })
    });
}

// ---- ch06-scan ---------------------------------------------------------------------------------

/// One level of blocks, the block totals brought to the host, scanned there and sent back (the
/// upload is no input; at n = 1 it is, by chance, and the extra download shows).
#[test]
fn scan_with_the_totals_scanned_on_the_host() {
    expect_failure(
        "scan_with_the_totals_scanned_on_the_host",
        &["went from the device to the host", "The totals stay on the device"],
        || {
            ch06::scan(|gpu: &Gpu, x: &[u32]| {
                let module = gpu.load_module(Source::file(gpubook::testing::workspace_file("solutions/kernels/ch06/block_scan.cu")))?;
                let (scan, add) = (module.load_function("block_scan")?, module.load_function("add_block_offsets")?);
                let stream = gpu.default_stream();
                let n = x.len();
                let blocks = n.div_ceil(256).max(1);
                let x_d = stream.clone_htod(x)?;
                let mut y = stream.alloc_zeros::<u32>(n)?;
                let mut sums = stream.alloc_zeros::<u32>(blocks)?;
                let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
                let n_i = n as i32;
                let mut l = stream.launch_builder(&scan);
                l.arg(&x_d).arg(&mut y).arg(&mut sums).arg(&n_i);
                unsafe { l.launch(cfg) }?;
                let totals = stream.clone_dtoh(&sums)?;
                let scanned: Vec<u32> = totals
                    .iter()
                    .scan(0u32, |s, &v| {
                        *s = s.wrapping_add(v);
                        Some(*s)
                    })
                    .collect();
                let scanned_d = stream.clone_htod(&scanned)?;
                let mut l = stream.launch_builder(&add);
                l.arg(&mut y).arg(&scanned_d).arg(&n_i);
                unsafe { l.launch(cfg) }?;
                stream.clone_dtoh(&y)
            })
        },
    );
}

/// The library's single-pass scan called instead of the exercise's kernels.
#[test]
fn scan_by_the_library() {
    expect_failure("scan_by_the_library", &["launched `scan_decoupled`", "block_scan and add_block_offsets"], || {
        ch06::scan(|gpu: &Gpu, x: &[u32]| {
            let f = gpu.load_module(Source::library("perf/scan.cu"))?.load_function("scan_decoupled")?;
            let stream = gpu.default_stream();
            let n = x.len();
            // kernels/perf/scan.cu's tiles: 8192 values, 128 threads.
            let tiles = n.div_ceil(8192).max(1);
            let x_d = stream.clone_htod(x)?;
            let mut y = stream.alloc_zeros::<u32>(n)?;
            let mut status = stream.alloc_zeros::<u64>(tiles + 1)?;
            let n_i = n as i32;
            let mut l = stream.launch_builder(&f);
            l.arg(&x_d).arg(&mut y).arg(&mut status).arg(&n_i);
            unsafe { l.launch(LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 }) }?;
            stream.clone_dtoh(&y)
        })
    });
}

/// Two levels at most: the totals' totals are never added.
#[test]
fn scan_of_two_levels_only() {
    expect_failure("scan_of_two_levels_only", &["y[", "the multi-block scan"], || {
        ch06::scan(|gpu: &Gpu, x: &[u32]| {
            // The solution on at most 65,536 values at a time, each part from zero: past one
            // block of totals, the parts are never joined.
            let mut y = Vec::new();
            for part in x.chunks(65_536) {
                y.extend(solutions::ch06::scan(gpu, part)?);
            }
            if x.is_empty() {
                return solutions::ch06::scan(gpu, x);
            }
            Ok(y)
        })
    });
}

// ---- ch06-compact ------------------------------------------------------------------------------

fn compact_with(text: String) -> impl Fn(&Gpu, &[u32], u32) -> Result<Vec<u32>> {
    move |gpu, experts, expert| {
        with_kernel(gpu, "ch06/compact.cu", text.clone(), || solutions::ch06::tokens_for_expert(gpu, experts, expert))
    }
}

/// Places handed out by a global atomic counter: the right tokens, in the order threads arrive
/// (on the emulator's check mode, which runs threads in order, the right order by luck).
#[test]
fn compact_with_an_atomic_counter() {
    const ATOMIC: &str = r#"
extern "C" __global__ void compact(const unsigned* experts, unsigned* tokens, unsigned* counter, int n, unsigned expert) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && experts[i] == expert) tokens[atomicAdd(counter, 1u)] = i;
}"#;
    expect_failure_on_emulator("compact_with_an_atomic_counter", &["atomic", "No atomics"], || {
        ch06::tokens_for_expert(|gpu: &Gpu, experts: &[u32], expert: u32| {
            let f = gpu.load_module(Source::text("compact_atomic.cu", ATOMIC))?.load_function("compact")?;
            let stream = gpu.default_stream();
            let n = experts.len();
            let experts_d = stream.clone_htod(experts)?;
            let mut tokens = stream.alloc_zeros::<u32>(n.max(1))?;
            let mut counter = stream.alloc_zeros::<u32>(1)?;
            let n_i = n as i32;
            let mut l = stream.launch_builder(&f);
            l.arg(&experts_d).arg(&mut tokens).arg(&mut counter).arg(&n_i).arg(&expert);
            let blocks = n.div_ceil(256).max(1) as u32;
            unsafe { l.launch(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }?;
            let kept = stream.clone_dtoh(&counter)?[0] as usize;
            stream.clone_dtoh(&tokens.slice(..kept.min(n)))
        })
    });
}

/// The right tokens in another order (the order an atomic counter may give on a GPU).
#[test]
fn compact_out_of_order() {
    expect_failure("compact_out_of_order", &["not in order", "No atomics"], || {
        ch06::tokens_for_expert(|gpu: &Gpu, experts: &[u32], expert: u32| {
            let mut tokens = solutions::ch06::tokens_for_expert(gpu, experts, expert)?;
            tokens.reverse();
            Ok(tokens)
        })
    });
}

/// Thread 0 of each block walks its block's tokens alone.
#[test]
fn compact_by_one_thread_a_block() {
    let serial = mutant(
        "ch06/compact.cu",
        &[(
            "if (keep) {\n        // Before this token: the blocks before, the warps before, the kept lanes below.\n        \
             tokens[block_offsets[blockIdx.x] + warp_offsets[warp] + __popc(kept & lanes_below())] = i;\n    }",
            "if (threadIdx.x == 0) {\n        unsigned place = block_offsets[blockIdx.x];\n        \
             for (int j = blockIdx.x * blockDim.x; j < n && j < (blockIdx.x + 1) * blockDim.x; j++)\n            \
             if (experts[j] == expert) tokens[place++] = j;\n    }",
        )],
    );
    expect_failure_on_emulator("compact_by_one_thread_a_block", &["worked through its block alone", "__ballot_sync"], || {
        ch06::tokens_for_expert(compact_with(serial))
    });
}

/// Each kept lane counts the kept lanes from itself up instead of below it: the places of a
/// warp's tokens come out reversed.
#[test]
fn compact_counting_the_lanes_above() {
    let reversed = mutant("ch06/compact.cu", &[("__popc(kept & lanes_below())] = i;", "__popc(kept & ~lanes_below()) - 1] = i;")]);
    expect_failure("compact_counting_the_lanes_above", &["not in order", "lanes_below"], || {
        ch06::tokens_for_expert(compact_with(reversed))
    });
}

#[test]
fn compact_on_the_host() {
    let idle = mutant(
        "ch06/compact.cu",
        &[("tokens[block_offsets[blockIdx.x] + warp_offsets[warp] + __popc(kept & lanes_below())] = i;", "(void)kept;")],
    );
    expect_failure("compact_on_the_host", &["`tokens` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch06::tokens_for_expert(move |gpu: &Gpu, experts: &[u32], expert: u32| {
            compact_with(idle.clone())(gpu, experts, expert)?;
            Ok((0..experts.len() as u32).filter(|&i| experts[i as usize] == expert).collect())
        })
    });
}
