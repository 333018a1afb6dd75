//! Chapter 6: parallel patterns. Results are integers, compared exactly, on edge sizes and sizes
//! drawn from the seed; then what the emulator counted holds the pattern: the histogram does its
//! atomics in shared memory (a "privatised" one that still counts every value in global memory
//! fails), the block scan passes values between lanes with shuffles, the multi-block scan keeps
//! the block sums on the device and is built from the learner's own kernels, and the compaction
//! places every token from counts and a scan, with no thread doing a block's work alone.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{computed_on_the_device, counted_launches};
use super::explain::Explain;
use super::words::count;
use super::{Ctx, Failure, check_values, grade, sizes};
use gpubook::gpu::digest_of;
use gpubook::gpu::{CopyDir, Gpu, OpKind, Result, Trace};

const PRIVATISED: &str = "privatisation: each block counts its values into its own copy of the bins in shared memory \
     (atomicAdd on shared memory, where contention stays inside the block and costs no trip to L2), then adds each \
     non-zero bin into counts with one global atomic: bins × blocks global atomics instead of one per value";

/// `histogram(gpu, values, bins) -> counts`.
pub fn histogram(f: impl Fn(&Gpu, &[u32], usize) -> Result<Vec<u32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "a __syncthreads after zeroing the shared bins (no thread may count into a bin before it is zero) and \
             another before merging (every count of the block is in before a thread adds its bins to counts)",
        ),
        uninitialized: Some(
            "the shared bins start as garbage: zero every one of them (threads b = threadIdx.x, + blockDim.x, ...) before counting",
        ),
        out_of_bounds: Some(
            "`local` holds bins counters and the grid-stride loop stops at n: local[values[i]] for i < n only, and \
             bins b < bins only",
        ),
        divergence: Some("every thread of the block must reach each __syncthreads: guard the work, not the barrier"),
        ..Default::default()
    };
    grade("ch06-histogram", |ctx| {
        let bins_cycle = [256usize, 7, 1000, 1, 4096, 256, 64];
        let mut cases: Vec<(usize, usize, String, Distribution)> = sizes(&mut ctx.rng, 256, 100_003)
            .into_iter()
            .enumerate()
            .map(|(k, (n, name))| (n, bins_cycle[k % bins_cycle.len()], name, Distribution::Uniform))
            .collect();
        cases.push((50_000, 256, "50,000 copies of one value: every atomic on one counter".into(), Distribution::OneValue));
        cases.push((60_000, 300, "60,000 values, most of them in a few bins".into(), Distribution::Skewed));
        for (n, bins, name, dist) in cases {
            let input = format!("{} in {} ({name})", count(n, "value"), count(bins, "bin"));
            let values = dist.values(ctx, n, bins);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &values, bins))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let mut want = vec![0u32; bins];
            for &v in &values {
                want[v as usize] += 1;
            }
            // Counts past n can only come from bins that never started at zero.
            let concept = if got.iter().any(|&c| c as usize > n) {
                "counts larger than the number of values: the shared bins start as garbage; zero every one of them before counting"
            } else {
                "counts[b] is the number of values equal to b: every value counted once, by exactly one thread"
            };
            check_values("counts", &got, &want, None).map_err(|e| e.input(&input).concept(concept))?;
            computed_on_the_device(&trace, "counts", &got, &[("values", digest_of(&values))]).map_err(|e| e.input(&input))?;
            privatised(ctx, &trace, n, bins).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

#[derive(Clone, Copy)]
enum Distribution {
    Uniform,
    OneValue,
    Skewed,
}

impl Distribution {
    fn values(self, ctx: &mut Ctx, n: usize, bins: usize) -> Vec<u32> {
        match self {
            Distribution::Uniform => (0..n).map(|_| ctx.rng.usize(0, bins) as u32).collect(),
            Distribution::OneValue => vec![ctx.rng.usize(0, bins) as u32; n],
            Distribution::Skewed => (0..n).map(|_| (ctx.rng.usize(0, bins).pow(3) / (bins * bins)) as u32).collect(),
        }
    }
}

/// A privatised histogram does at most one global atomic per bin per block; the launch's grid says
/// how many blocks there were.
fn privatised(ctx: &mut Ctx, trace: &Trace, n: usize, bins: usize) -> Result<(), Failure> {
    let blocks: u64 = trace
        .launches()
        .map(|op| if let OpKind::Launch { grid, .. } = &op.kind { grid.iter().map(|&g| g as u64).product() } else { 0 })
        .sum();
    let allowed = blocks * bins as u64;
    if (n as u64) < 2 * allowed {
        return Ok(()); // too few values to tell the two apart
    }
    let Some(counts) = counted_launches(ctx, trace, "that the values are counted in shared memory") else { return Ok(()) };
    let global: u64 = counts.iter().map(|c| c.global.atomics).sum();
    if global > allowed {
        let shared: u64 = counts.iter().map(|c| c.shared.atomics).sum();
        return Err(Failure::new(format!(
            "{} on global memory ({} on shared memory) for {}: a privatised histogram of {} makes at most one global \
             atomic per bin per block, {allowed} here",
            count(global as usize, "atomic"),
            shared,
            count(n, "value"),
            count(blocks as usize, "block")
        ))
        .concept(PRIVATISED));
    }
    Ok(())
}

const BLOCK_SCAN: &str = "a block scan in two levels: each warp scans its 32 values with __shfl_up_sync (d = 1, 2, 4, 8, \
     16, adding only in lanes >= d), lane 31 stores the warp's total in warp_totals, warp 0 scans those totals the same \
     way after a __syncthreads, and each warp w > 0 adds warp_totals[w - 1]";

/// `block_scan(gpu, x) -> (y, block_sums)`: each block of 256 scanned on its own.
pub fn block_scan(f: impl Fn(&Gpu, &[u32]) -> Result<(Vec<u32>, Vec<u32>)>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "lane 31 of each warp stores the warp's total and warp 0 reads them all: a __syncthreads between; and \
             another before the warps read the scanned totals back",
        ),
        divergence: Some(
            "a shuffle is a meeting of every lane its mask names: call warp_scan from all 32 lanes (pass 0 past n \
             rather than skipping the call), and let every thread reach each __syncthreads",
        ),
        uninitialized: Some("warp 0 reads only the totals that were stored: lanes >= blockDim.x / 32 take 0 instead"),
        out_of_bounds: Some("threads past n read nothing from x (they scan a 0) and write nothing to y"),
        ..Default::default()
    };
    grade("ch06-block-scan", |ctx| {
        for (n, name) in sizes(&mut ctx.rng, 256, 100_003) {
            let input = format!("n = {n} ({name})");
            let x: Vec<u32> = (0..n).map(|_| ctx.rng.usize(0, 1000) as u32).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let (y, sums) = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &x))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let (want_y, want_sums) = block_scans(&x, 256);
            check_values("y", &y, &want_y, Some(u32::MAX))
                .map_err(|e| e.input(&input).concept("y[i] = x[b0] + ... + x[i], b0 the first element of i's block of 256"))?;
            check_values("block_sums", &sums, &want_sums, Some(u32::MAX))
                .map_err(|e| e.input(&input).concept("block_sums[b] is the total of block b: its last element of y"))?;
            computed_on_the_device(&trace, "y", &y, &[("x", digest_of(&x))]).map_err(|e| e.input(&input))?;
            through_shuffles(ctx, &trace).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// Each block's inclusive scan of `x` and each block's total.
fn block_scans(x: &[u32], block: usize) -> (Vec<u32>, Vec<u32>) {
    let mut y = Vec::with_capacity(x.len());
    let mut sums = Vec::new();
    for chunk in x.chunks(block) {
        let mut s = 0u32;
        for &v in chunk {
            s = s.wrapping_add(v);
            y.push(s);
        }
        sums.push(s);
    }
    if sums.is_empty() {
        sums.push(0);
    }
    (y, sums)
}

/// In a two-level shuffle scan a thread touches shared memory at most four times (a warp total
/// stored, loaded, stored scanned, loaded back) and global memory twice; a scan that steps
/// through shared memory reads it twice a step, and a thread scanning its block alone reads it
/// all.
fn through_shuffles(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that the warps scan with shuffles") else { return Ok(()) };
    for c in counts {
        let m = c.per_thread_max;
        let threads = count(c.threads as usize, "thread");
        if m.global_loads + m.shared_loads > 64 {
            return Err(Failure::new(format!(
                "one thread made {} loads in a launch of {threads}: it scanned the block alone; a scan of 256 values \
                 takes log2(256) = 8 parallel steps",
                m.global_loads + m.shared_loads
            ))
            .concept(BLOCK_SCAN));
        }
        if m.shared_loads + m.shared_stores > 6 {
            return Err(Failure::new(format!(
                "one thread made {} to shared memory: the values went through shared memory step by step, not from \
                 lane to lane",
                count((m.shared_loads + m.shared_stores) as usize, "access")
            ))
            .concept(BLOCK_SCAN));
        }
    }
    Ok(())
}

const MULTI_BLOCK: &str = "the multi-block scan: block_scan scans each block and writes its total; the totals, scanned \
     the same way (the same function, recursively, since they may fill many blocks themselves), give each block the \
     sum of the blocks before it, which add_block_offsets adds. The totals stay on the device, and this builds on your \
     block_scan kernel (ch06-block-scan)";

/// `scan(gpu, x) -> y`: the inclusive scan of all of x.
pub fn scan(f: impl Fn(&Gpu, &[u32]) -> Result<Vec<u32>>) -> GradeReport {
    let explain = Explain {
        uninitialized: Some(
            "every buffer a kernel reads must have been written first: block_scan writes y and the block totals, the \
             recursive scan writes the scanned totals, then add_block_offsets reads them",
        ),
        ..Default::default()
    };
    grade("ch06-scan", |ctx| {
        let mut cases = sizes(&mut ctx.rng, 256, 100_003);
        cases.insert(cases.len() - 2, (65_536, "256 × 256: the totals fill one block exactly".into()));
        cases.insert(cases.len() - 2, (65_537, "256 × 256 + 1: three levels of blocks".into()));
        cases.push((3000, "3000 values of any size: the sums wrap around".into()));
        for (n, name) in cases {
            let input = format!("n = {n} ({name})");
            let wrap = name.contains("wrap");
            let x: Vec<u32> = (0..n).map(|_| if wrap { ctx.rng.next_u64() as u32 } else { ctx.rng.usize(0, 1000) as u32 }).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &x))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want: Vec<u32> = x
                .iter()
                .scan(0u32, |s, &v| {
                    *s = s.wrapping_add(v);
                    Some(*s)
                })
                .collect();
            check_values("y", &got, &want, (!wrap).then_some(u32::MAX)).map_err(|e| e.input(&input).concept(MULTI_BLOCK))?;
            computed_on_the_device(&trace, "y", &got, &[("x", digest_of(&x))]).map_err(|e| e.input(&input))?;
            built_from_block_scans(&trace, n).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// Every launch is one of the exercise's two kernels, and nothing but the result comes back to
/// the host.
fn built_from_block_scans(trace: &Trace, n: usize) -> Result<(), Failure> {
    if let Some(other) = trace.launches().filter_map(|op| op.kernel()).find(|k| !matches!(*k, "block_scan" | "add_block_offsets")) {
        return Err(
            Failure::new(format!("the scan launched `{other}`: build it from block_scan and add_block_offsets")).concept(MULTI_BLOCK)
        );
    }
    let downloads = trace.ops.iter().filter(|op| matches!(op.kind, OpKind::Copy { dir: CopyDir::DeviceToHost, .. })).count();
    if downloads > 1 {
        return Err(Failure::new(format!(
            "{} went from the device to the host; only the result needs to: the block totals can be scanned where they are",
            count(downloads, "copy")
        ))
        .concept(MULTI_BLOCK));
    }
    let scans = trace.launches().filter(|op| op.kernel() == Some("block_scan")).count();
    let levels = levels_of_blocks(n, 256);
    if scans < levels {
        return Err(Failure::new(format!(
            "block_scan ran {}; {} values need {levels} levels of blocks (the totals of the totals ...)",
            count(scans, "time"),
            n
        ))
        .concept(MULTI_BLOCK));
    }
    Ok(())
}

/// How many times n values are scanned block by block until one block holds them.
fn levels_of_blocks(mut n: usize, block: usize) -> usize {
    let mut levels = 1;
    while n > block {
        n = n.div_ceil(block);
        levels += 1;
    }
    levels
}

const COMPACTION: &str = "compaction: a kept token's place is the number of kept tokens before it: in the blocks before \
     (block_offsets, a scan of the blocks' counts), in the warps of its block before its own (__ballot_sync and __popc \
     give each warp's count; an exclusive scan of them), and in the lanes below it (__popc(kept & lanes_below())). \
     No atomics: the order comes out right by construction";

/// `tokens_for_expert(gpu, experts, expert) -> tokens`: the indices i with `experts[i] == expert`, in order.
pub fn tokens_for_expert(f: impl Fn(&Gpu, &[u32], u32) -> Result<Vec<u32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "warp_offsets: the warps' counts are stored, then scanned, then read: a __syncthreads after the stores and \
             another after the scan",
        ),
        divergence: Some(
            "__ballot_sync(0xffffffff, keep) is a meeting of all 32 lanes: every lane calls it, those past n with keep \
             false; and every thread reaches each __syncthreads",
        ),
        uninitialized: Some(
            "count_kept writes every block's count (one thread, after the block has counted) and compact reads only the \
             warp_offsets that were stored",
        ),
        out_of_bounds: Some("a token's place is below the total of kept tokens: count only i < n with experts[i] == expert"),
        ..Default::default()
    };
    grade("ch06-compact", |ctx| {
        let experts = 8usize;
        let mut cases: Vec<(usize, Option<u32>, String)> =
            sizes(&mut ctx.rng, 256, 100_003).into_iter().map(|(n, name)| (n, None, name)).collect();
        cases.push((1000, Some(u32::MAX), "1000 tokens, every one for the expert".into()));
        cases.push((1000, Some(99), "1000 tokens, none for the expert".into()));
        for (n, all, name) in cases {
            let target = ctx.rng.usize(0, experts) as u32;
            let routed: Vec<u32> = match all {
                Some(u32::MAX) => vec![target; n],
                _ => (0..n).map(|_| ctx.rng.usize(0, experts) as u32).collect(),
            };
            let expert = if all == Some(99) { 99 } else { target };
            let input = format!("{} routed over {} experts, expert {expert} ({name})", count(n, "token"), experts);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &routed, expert))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want: Vec<u32> = (0..n as u32).filter(|&i| routed[i as usize] == expert).collect();
            if got != want {
                let mut sorted = got.clone();
                sorted.sort_unstable();
                if sorted == want {
                    return Err(Failure::new("the right tokens came back, but not in order").input(&input).concept(COMPACTION));
                }
            }
            check_values("tokens", &got, &want, Some(u32::MAX)).map_err(|e| e.input(&input).concept(COMPACTION))?;
            if !want.is_empty() {
                computed_on_the_device(&trace, "tokens", &got, &[("experts", digest_of(&routed))]).map_err(|e| e.input(&input))?;
            }
            placed_by_a_scan(ctx, &trace).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// No global atomic per token, and no thread doing its block's work alone (in every kernel but
/// the given scan of the counts, which loops over them by design).
fn placed_by_a_scan(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that every token is placed by counts and a scan") else { return Ok(()) };
    for (op, c) in trace.launches().zip(counts) {
        let kernel = op.kernel().unwrap_or("?");
        if kernel == "scan_counts" {
            continue;
        }
        let blocks = c.threads.div_ceil(256);
        if c.global.atomics > blocks {
            return Err(Failure::new(format!(
                "{kernel} made {} on global memory in a launch of {}: a place taken from an atomic counter depends on \
                 which thread gets there first",
                count(c.global.atomics as usize, "atomic"),
                count(blocks as usize, "block")
            ))
            .concept(COMPACTION));
        }
        let loads = c.per_thread_max.global_loads + c.per_thread_max.shared_loads;
        if loads > 40 {
            return Err(Failure::new(format!(
                "one thread of {kernel} made {loads} loads: it worked through its block alone; with a ballot each \
                 thread needs one token and a few counts"
            ))
            .concept(COMPACTION));
        }
    }
    Ok(())
}
