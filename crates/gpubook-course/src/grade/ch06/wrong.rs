//! Chapter 6's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch06;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, expect_failure, expect_failure_on_emulator, mutant, with_kernel};
use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};

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
                // SAFETY: x_d and y hold n values, touched only where i < n, and sums one total per block.
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
                // SAFETY: y holds n values and scanned_d one per block; add_block_offsets guards i < n.
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
            // SAFETY: x_d and y hold n values, which the tiles' loads and stores check, and status one
            // zeroed word per 8192-value tile plus the ticket.
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
            // SAFETY: tokens holds max(n, 1) words, room for every matching token the counter places, and
            // counter its one word; reads of experts_d stop at n.
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
