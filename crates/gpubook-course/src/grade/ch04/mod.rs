//! Chapter 4: shared memory and synchronisation. The host code is given, so these graders are
//! about the kernels: values against a float64 reference (within a tolerance that grows with
//! the number of terms summed), on shapes that are not multiples of the tile, and the
//! emulator's race detector, which turns a missing `__syncthreads` into a diagnostic naming the
//! two threads and the line instead of a result that is only sometimes wrong.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{computed_on_the_device, counted_launches};
use super::explain::Explain;
use super::words::count;
use super::{Ctx, Failure, Tolerance, check_f32, grade, sizes};
use gpubook::gpu::digest_of;
use gpubook::gpu::{AccessCounts, Gpu, Result, Trace};

/// The tile edge of the chapter's kernels (gpubook's TILE in solutions/src/ch04.rs).
const TILE: u64 = 16;

const MATMUL: &str = "c[row][col] is the sum over j of a[row][j] * b[j][col], with a[row][j] at a[row * k + j] and \
     b[j][col] at b[j * n + col]; the tiles are padded with zeros where they hang over the edge of A or B, and each \
     tile is complete before it is read (__syncthreads) and read by all before it is overwritten (__syncthreads again)";

/// `tiled_matmul(gpu, a, b, m, k, n) -> c`: C = A × B, row-major, A m × k and B k × n.
pub fn tiled_matmul(f: impl Fn(&Gpu, &[f32], &[f32], usize, usize, usize) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "__syncthreads, twice per tile: after loading the tiles (no thread may read a tile element before the \
             thread that loads it has stored it) and after using them (no thread may overwrite a tile that others are \
             still reading)",
        ),
        out_of_bounds: Some(
            "tiles hang over the edge of A and B when m, k or n is not a multiple of TILE: for elements outside the \
             matrix, store a zero in the tile instead of reading (a zero adds nothing to the sum), and store only the \
             elements inside C",
        ),
        divergence: Some(
            "every thread of a block must reach each __syncthreads, even a thread whose (row, col) lies outside C: \
             guard the loads and the store, never the loop around the barriers",
        ),
        uninitialized: Some(
            "every thread stores its element of both tiles at each step, 0.0f when it lies outside A or B, before \
             any thread reads the tiles",
        ),
        ..Default::default()
    };
    grade("ch04-tiled-matmul", |ctx| {
        // (m, k, n): A is m × k, B is k × n.
        let shapes: [(usize, usize, usize, &str); 7] = [
            (1, 1, 1, "1 × 1 times 1 × 1"),
            (16, 16, 16, "one tile each"),
            (32, 48, 32, "whole tiles, three steps along k"),
            (17, 33, 15, "partial tiles in every dimension"),
            (1, 40, 100, "a row vector times a matrix"),
            (100, 40, 1, "a matrix times a column vector"),
            (83, 61, 47, "larger, no dimension a multiple of 16"),
        ];
        let drawn = (ctx.rng.usize(60, 200), ctx.rng.usize(60, 200), ctx.rng.usize(60, 200), "drawn from the seed");
        for (m, k, n, name) in shapes.into_iter().chain([drawn]) {
            let input = format!("A {m} × {k}, B {k} × {n} ({name})");
            // Values in [0, 1): no cancellation, so a float64 reference bounds the error relatively.
            let a = ctx.rng.vec_f32(m * k, 0.0, 1.0);
            let b = ctx.rng.vec_f32(k * n, 0.0, 1.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let c = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &a, &b, m, k, n))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let mut want = vec![0.0f64; m * n];
            for row in 0..m {
                for j in 0..k {
                    let x = a[row * k + j] as f64;
                    for col in 0..n {
                        want[row * n + col] += x * b[j * n + col] as f64;
                    }
                }
            }
            check_f32("c", &c, &want, Tolerance::sum_of(k)).map_err(|e| e.input(&input).concept(MATMUL))?;
            computed_on_the_device(&trace, "c", &c, &[("a", digest_of(&a)), ("b", digest_of(&b))]).map_err(|e| e.input(&input))?;
            tiles_reused(ctx, &trace, m as u64, k as u64, n as u64).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

const TREE: &str = "a tree in shared memory: every thread stores its element (0.0f past n) in partial[t] and the block \
     waits; then at each step, stride = blockDim.x / 2, blockDim.x / 4, ..., 1, threads t < stride add partial[t + \
     stride] into partial[t] and the block waits again (__syncthreads outside the if); thread 0 writes partial[0] to \
     block_sums[blockIdx.x]";

/// `reduce_tree(gpu, x) -> sum`, with the shared-memory tree kernel.
pub fn reduce_tree(f: impl Fn(&Gpu, &[f32]) -> Result<f32>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "a __syncthreads after the loads and after every step of the tree: thread t reads partial[t + stride], which \
             another thread wrote in the step before (and threads of other warps run at their own pace)",
        ),
        out_of_bounds: Some(
            "threads past n load 0.0f instead of reading x[i], and only threads t < stride read partial[t + stride] \
             (partial holds blockDim.x floats)",
        ),
        divergence: Some(
            "every thread of the block must reach each __syncthreads: put it after the `if (t < stride)`, not inside \
             it, and let no thread return early",
        ),
        uninitialized: Some("every thread stores partial[t] (0.0f past n) before the tree reads it"),
        ..Default::default()
    };
    grade_reduction("ch04-reduce-tree", &explain, TREE, f)
}

const WARP: &str = "two levels: each warp adds up its 32 values with __shfl_down_sync at offsets 16, 8, 4, 2, 1 (lane 0 \
     ends with the total), lane 0 of each warp stores it in warp_sums[warp], the block waits (__syncthreads), and warp \
     0 adds up the blockDim.x / 32 warp totals the same way";

/// `reduce_warp(gpu, x) -> sum`, with the warp-shuffle kernel.
pub fn reduce_warp(f: impl Fn(&Gpu, &[f32]) -> Result<f32>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "lane 0 of each warp stores its total in warp_sums, and warp 0 reads them: a __syncthreads between the \
             two, or warp 0 reads totals other warps have not stored yet",
        ),
        out_of_bounds: Some(
            "threads past n contribute 0.0f instead of reading x[i]; warp 0 reads warp_sums[lane] only for lane < \
             blockDim.x / 32",
        ),
        divergence: Some(
            "a shuffle is a meeting of all the lanes its mask names (0xffffffff: all 32): every lane must call it, so \
             call warp_sum outside any `if (i < n)` and pass 0.0f instead; every thread must reach the __syncthreads",
        ),
        uninitialized: Some("warp 0 reads only the warp_sums that were stored: lanes >= blockDim.x / 32 take 0.0f instead"),
        ..Default::default()
    };
    grade_reduction("ch04-reduce-warp", &explain, WARP, f)
}

/// Both reductions: the sum of n values in [0, 1), from one element to three passes of blocks.
fn grade_reduction(id: &'static str, explain: &Explain<'_>, concept: &str, f: impl Fn(&Gpu, &[f32]) -> Result<f32>) -> GradeReport {
    grade(id, |ctx: &mut Ctx| {
        let mut sizes = sizes(&mut ctx.rng, 256, 100_003);
        sizes.insert(sizes.len() - 2, (65_537, "256 × 256 + 1: three passes".into()));
        for (n, name) in sizes {
            let input = format!("n = {n} ({name})");
            // Positive values: no cancellation, so the float64 sum bounds the error relatively.
            let x = ctx.rng.vec_f32(n, 0.0, 1.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, explain, || f(&ctx.gpu, &x))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want: f64 = x.iter().map(|&v| v as f64).sum();
            check_sum(got, want, n).map_err(|e| e.input(&input).concept(concept))?;
            computed_on_the_device(&trace, "the sum", &[got], &[("x", digest_of(&x))]).map_err(|e| e.input(&input))?;
            if id == "ch04-reduce-tree" {
                tree_steps(ctx, &trace).map_err(|e| e.input(&input))?;
            } else {
                through_shuffles(ctx, &trace).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

/// One sum against its float64 reference, with a diagnosis of the usual ways it goes wrong.
fn check_sum(got: f32, want: f64, n: usize) -> Result<(), Failure> {
    let expected = format!("expected {want:.4} (the float64 sum), got {got}");
    if got.to_bits() == u32::MAX {
        return Err(
            Failure::new("the sum was never written: thread 0 of each block stores its total in block_sums[blockIdx.x]").detail(expected)
        );
    }
    if got.is_nan() {
        return Err(Failure::new("the sum is NaN: a value that was never written went into it").detail(expected));
    }
    if check_f32("sum", &[got], &[want], Tolerance::sum_of(n)).is_ok() {
        return Ok(());
    }
    let ratio = got as f64 / want;
    let what = if ratio > 1.5 && (ratio - ratio.round()).abs() < 1e-3 {
        format!("the sum came back {} times too large: values were added in more than once", ratio.round())
    } else if got == 0.0 {
        "the sum came back 0".to_string()
    } else {
        format!("the sum is off by {:.3e} ({:.2e} of it)", got as f64 - want, (got as f64 - want).abs() / want)
    };
    Err(Failure::new(what).detail(expected))
}

const TRANSPOSE: &str = "out is cols × rows and out[c][r] = in[r][c]: thread (tx, ty) stores in[y][x] in tile[ty][tx], \
     the block waits at a __syncthreads, then it writes tile[tx][ty] to out[y'][x'] with x' = blockIdx.y * TILE + tx, y' = blockIdx.x * \
     TILE + ty, guarded by the output's sizes (x' < rows, y' < cols) and with the output's row length, rows";

/// `transpose(gpu, m, rows, cols) -> t`: the transpose of a row-major `rows × cols` matrix.
pub fn transpose(f: impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "a __syncthreads between storing the tile and reading it transposed: thread (tx, ty) reads tile[tx][ty], \
             which thread (ty, tx) stored",
        ),
        out_of_bounds: Some(
            "the write goes to out, which is cols × rows: guard it with the output's sizes (x' < rows, y' < cols), not \
             the input's, and index it with the output's row length, out[y' * rows + x']",
        ),
        uninitialized: Some(
            "a thread reads tile[tx][ty] only when that element was inside `in`: the guard of the write must match the \
             transposed guard of the read (x' < rows, y' < cols)",
        ),
        ..Default::default()
    };
    grade("ch04-transpose", |ctx| {
        let shapes: [(usize, usize, &str); 8] = [
            (1, 1, "a single element"),
            (1, 100, "a single row"),
            (100, 1, "a single column"),
            (32, 32, "one tile"),
            (17, 33, "not square, partial tiles"),
            (33, 31, "33 × 31"),
            (64, 96, "whole tiles, not square"),
            (211, 150, "larger, partial tiles"),
        ];
        let drawn = (ctx.rng.usize(150, 700), ctx.rng.usize(150, 700), "drawn from the seed");
        for (rows, cols, name) in shapes.into_iter().chain([drawn]) {
            let input = format!("{} × {} ({name})", count(rows, "row"), count(cols, "column"));
            let m = ctx.rng.vec_f32(rows * cols, -100.0, 100.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &m, rows, cols))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let mut want = vec![0.0f64; rows * cols];
            for r in 0..rows {
                for c in 0..cols {
                    want[c * rows + r] = m[r * cols + c] as f64;
                }
            }
            check_f32("out", &got, &want, Tolerance::EXACT).map_err(|e| e.input(&input).concept(TRANSPOSE))?;
            computed_on_the_device(&trace, "out", &got, &[("m", digest_of(&m))]).map_err(|e| e.input(&input))?;
            if rows >= 32 && cols >= 32 {
                coalesced(ctx, &trace).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

/// A tiled kernel reads each element of A about n / TILE times from global memory, and each of B
/// about m / TILE times: a kernel that reads them for every product (n and m times) skipped the
/// shared-memory tiles the exercise is about.
fn tiles_reused(ctx: &mut Ctx, trace: &Trace, m: u64, k: u64, n: u64) -> Result<(), Failure> {
    if m < 2 * TILE || n < 2 * TILE {
        return Ok(()); // one tile across: naive and tiled read the same
    }
    let Some(counts) = counted_launches(ctx, trace, "that the tiles are reused from shared memory") else { return Ok(()) };
    let loaded: u64 = counts.iter().map(|c| c.global.loads.bytes).sum();
    let tiled = 4 * (m * k * n.div_ceil(TILE) + k * n * m.div_ceil(TILE));
    let shared: u64 = counts.iter().map(|c| c.shared.loads.requests).sum();
    if loaded > 2 * tiled || shared == 0 {
        let per_a = loaded as f64 / (4 * (m * k + k * n)) as f64;
        return Err(Failure::new(format!(
            "the kernel read {loaded} bytes of A and B from global memory, each element about {per_a:.0} times; with \
             {TILE} × {TILE} tiles in shared memory it reads each about {} times ({tiled} bytes)",
            n.div_ceil(TILE).max(m.div_ceil(TILE))
        ))
        .concept(
            "tiling: a block copies a tile of A and a tile of B into shared memory once, and its threads read each \
             element from there TILE times, so global memory is read TILE times less than by a naive kernel",
        ));
    }
    Ok(())
}

/// A tree reduction takes log2(block) steps, each thread reading at most two values per step;
/// one thread adding up its block serially reads them all.
fn tree_steps(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that the block is reduced as a tree") else { return Ok(()) };
    for c in counts {
        let steps = (c.threads.max(1) as f64).log2().ceil() as u64;
        let most = c.per_thread_max.shared_loads + c.per_thread_max.global_loads;
        if most > 2 * steps + 2 {
            return Err(Failure::new(format!(
                "one thread made {most} loads in a launch of {}: a tree takes about log2 = {steps} steps, \
                 each thread at most one addition per step",
                count(c.threads as usize, "thread")
            ))
            .concept(TREE));
        }
    }
    Ok(())
}

/// A warp reduction passes values between lanes with shuffles: shared memory only carries each
/// warp's total to warp 0, one store per warp and one load per lane of warp 0.
fn through_shuffles(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that warps add up with shuffles") else { return Ok(()) };
    for c in counts {
        let most = c.per_thread_max.shared_loads + c.per_thread_max.shared_stores;
        if most > 2 {
            return Err(Failure::new(format!(
                "one thread made {} to shared memory: the warp's values went through shared memory, not from lane to lane",
                count(most as usize, "access")
            ))
            .concept(WARP));
        }
    }
    Ok(())
}

/// A transpose through a shared tile both reads and writes whole rows of 32 floats per warp
/// request (4 sectors of 32 bytes); a naive one writes a column, 32 sectors per request.
fn coalesced(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that the transpose reads and writes coalesced rows") else { return Ok(()) };
    let sum = |f: &dyn Fn(&AccessCounts) -> (u64, u64)| counts.iter().map(|c| f(c)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let (ls, lr) = sum(&|c| (c.global.loads.sectors, c.global.loads.requests));
    let (ss, sr) = sum(&|c| (c.global.stores.sectors, c.global.stores.requests));
    for (what, sectors, requests) in [("writes to out", ss, sr), ("reads of in", ls, lr)] {
        let per = sectors as f64 / requests.max(1) as f64;
        if per > 8.0 {
            return Err(Failure::new(format!(
                "the {what} touched {per:.1} sectors of 32 bytes per warp request; a warp reading or writing 32 floats \
                 in a row touches 4: the accesses are strided, not coalesced"
            ))
            .concept(
                "coalescing: a warp's 32 accesses become as few 32-byte sectors as the addresses allow. Read the tile \
                 by rows of in and write it by rows of out, turning it round in shared memory (tile[tx][ty]), so that \
                 neither the read nor the write walks down a column",
            ));
        }
    }
    Ok(())
}
