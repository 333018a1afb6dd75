//! Chapter 4: shared memory and synchronisation. The host code is given, so these graders are
//! about the kernels: values against a float64 reference (within a tolerance that grows with
//! the number of terms summed), on shapes that are not multiples of the tile, and the
//! emulator's race detector, which turns a missing `__syncthreads` into a diagnostic naming the
//! two threads and the line instead of a result that is only sometimes wrong.

use super::concepts::{computed_on_the_device, digest_of};
use super::explain::Explain;
use super::words::count;
use super::{Ctx, Failure, Tolerance, check_f32, grade, sizes};
use crate::gpu::{Gpu, Result};

const MATMUL: &str = "c[row][col] is the sum over j of a[row][j] * b[j][col], with a[row][j] at a[row * k + j] and \
     b[j][col] at b[j * n + col]; the tiles are padded with zeros where they hang over the edge of A or B, and each \
     tile is complete before it is read (__syncthreads) and read by all before it is overwritten (__syncthreads again)";

/// `tiled_matmul(gpu, a, b, m, k, n) -> c`: C = A × B, row-major, A m × k and B k × n.
pub fn tiled_matmul(f: impl Fn(&Gpu, &[f32], &[f32], usize, usize, usize) -> Result<Vec<f32>>) {
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
        }
        Ok(())
    });
}

const TREE: &str = "a tree in shared memory: every thread stores its element (0.0f past n) in partial[t] and the block \
     waits; then at each step, stride = blockDim.x / 2, blockDim.x / 4, ..., 1, threads t < stride add partial[t + \
     stride] into partial[t] and the block waits again (__syncthreads outside the if); thread 0 writes partial[0] to \
     block_sums[blockIdx.x]";

/// `reduce_tree(gpu, x) -> sum`, with the shared-memory tree kernel.
pub fn reduce_tree(f: impl Fn(&Gpu, &[f32]) -> Result<f32>) {
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
    grade_reduction("ch04-reduce-tree", &explain, TREE, f);
}

const WARP: &str = "two levels: each warp adds up its 32 values with __shfl_down_sync at offsets 16, 8, 4, 2, 1 (lane 0 \
     ends with the total), lane 0 of each warp stores it in warp_sums[warp], the block waits (__syncthreads), and warp \
     0 adds up the blockDim.x / 32 warp totals the same way";

/// `reduce_warp(gpu, x) -> sum`, with the warp-shuffle kernel.
pub fn reduce_warp(f: impl Fn(&Gpu, &[f32]) -> Result<f32>) {
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
    grade_reduction("ch04-reduce-warp", &explain, WARP, f);
}

/// Both reductions: the sum of n values in [0, 1), from one element to three passes of blocks.
fn grade_reduction(id: &str, explain: &Explain<'_>, concept: &str, f: impl Fn(&Gpu, &[f32]) -> Result<f32>) {
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
        }
        Ok(())
    });
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
pub fn transpose(f: impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>>) {
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
        }
        Ok(())
    });
}
