//! Chapter 3: SPMD and indexing. Beyond the values, these graders read the launch from the
//! trace, since the chapter is about launches: one of them, a grid that covers the data (with
//! ceiling division, in each dimension), x along a row, and for the grid-stride loop exactly the
//! grid the grader asked for.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{computed_on_the_device, counted_launches};
use super::explain::Explain;
use super::words::count;
use super::{Failure, Rng, Tolerance, check_f32, check_values, grade, sizes};
use gpubook::gpu::digest_of;
use gpubook::gpu::{CopyDir, Gpu, OpKind, Result, Trace};

/// A launch as the trace recorded it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl Launch {
    /// Threads along x and along y.
    pub fn threads(&self) -> (u64, u64) {
        (self.grid[0] as u64 * self.block[0] as u64, self.grid[1] as u64 * self.block[1] as u64)
    }
    pub fn describe(&self) -> String {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        format!("grid_dim ({gx}, {gy}, {gz}), block_dim ({bx}, {by}, {bz})")
    }
}

/// The launch of an exercise that makes exactly one.
pub(super) fn one_launch(trace: &Trace, what: &str) -> Result<Launch, Failure> {
    let launches: Vec<Launch> = trace
        .launches()
        .filter_map(|op| match &op.kind {
            OpKind::Launch { grid, block, .. } => Some(Launch { grid: *grid, block: *block }),
            _ => None,
        })
        .collect();
    match launches.as_slice() {
        [one] => Ok(*one),
        _ => Err(Failure::new(format!("{} kernel launches for {what}, expected one", launches.len()))
            .concept("one launch covers all the data when its grid is big enough")),
    }
}

/// The 2-D shapes every matrix and image grader tries, as (rows, cols) with their names: a
/// single element, a single row, a single column, exactly one 16 × 16 block, shapes that are not
/// multiples of the block (and are not square, so rows and columns cannot be mixed up unseen),
/// and a larger one drawn from the seed.
pub(super) fn shapes_2d(rng: &mut Rng) -> Vec<(usize, usize, String)> {
    let (rows, cols) = (rng.usize(150, 700), rng.usize(150, 700));
    let drawn = (rows, cols, format!("{rows} × {cols}, drawn from the seed"));
    let fixed: [(usize, usize, &str); 7] = [
        (1, 1, "a single element"),
        (1, 300, "a single row"),
        (300, 1, "a single column"),
        (16, 16, "one 16 × 16 block"),
        (17, 33, "17 × 33: not a multiple of the block, not square"),
        (33, 17, "33 × 17"),
        (97, 131, "97 × 131"),
    ];
    fixed.into_iter().map(|(r, c, name)| (r, c, name.to_string())).chain([drawn]).collect()
}

const CEIL: &str = "the grid needs ceil(n / block) blocks, n.div_ceil(block) in Rust: n / block rounds down, leaving \
     the last n % block elements without a thread (and no blocks at all when n < block)";
const GUARD: &str = "the boundary guard: the grid is rounded up to whole blocks, so the last block reaches past the end \
     of the arrays, and its extra threads must do nothing (`if (i < n)`)";

/// `vector_add(gpu, a, b) -> c`: `c[i] = a[i] + b[i]`.
pub fn vector_add(f: impl Fn(&Gpu, &[f32], &[f32]) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain { out_of_bounds: Some(GUARD), launch_config: Some(CEIL), ..Default::default() };
    grade("ch03-vector-add", |ctx| {
        for (n, name) in sizes(&mut ctx.rng, 256, 100_003) {
            let input = format!("n = {n} ({name})");
            let a = ctx.rng.vec_f32(n, -100.0, 100.0);
            let b = ctx.rng.vec_f32(n, -100.0, 100.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let c = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &a, &b))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let launch = one_launch(&trace, "one vector add").map_err(|e| e.input(&input))?;
            let (threads, _) = launch.threads();
            if threads < n as u64 {
                return Err(Failure::new(format!("the grid has {} in x for {}", count(threads as usize, "thread"), count(n, "element")))
                    .concept(CEIL)
                    .input(&input)
                    .detail(format!("the launch: {}", launch.describe())));
            }
            let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| *x as f64 + *y as f64).collect();
            check_f32("c", &c, &want, Tolerance::F32).map_err(|e| {
                let e = match still_zero(&c, &want) {
                    Some((first, more)) => Failure {
                        details: e.details,
                        ..Failure::new(format!(
                            "c[{first}] is still 0{}: the zeros of alloc_zeros, never overwritten by the kernel",
                            if more > 0 { format!(" (and so are {more} more elements)") } else { String::new() }
                        ))
                    },
                    None => e,
                };
                e.input(&input).concept(
                    "one thread per element: i = blockIdx.x * blockDim.x + threadIdx.x, a grid of ceil(n / block) \
                     blocks, and `if (i < n)` for the threads past the end",
                )
            })?;
            computed_on_the_device(&trace, "c", &c, &[("a", digest_of(&a)), ("b", digest_of(&b))]).map_err(|e| e.input(&input))?;
            if trace.bytes_copied(CopyDir::HostToDevice) != 2 * n * 4 || trace.bytes_copied(CopyDir::DeviceToHost) != n * 4 {
                return Err(Failure::new("copies move more or fewer bytes than a, b in and c out")
                    .concept("copy each input to the device once and the result back once")
                    .input(&input));
            }
            let leaks = trace.leaks();
            if !leaks.is_empty() {
                return Err(Failure::new(format!("{} device buffers were never freed", leaks.len()))
                    .concept("drop device buffers (cudaFree) when done")
                    .input(&input));
            }
        }
        Ok(())
    })
}

/// When every wrong element of `got` is exactly 0 (and should not be): the first and how many
/// more. Memory from `alloc_zeros` that the kernel never wrote looks like this.
fn still_zero(got: &[f32], want: &[f64]) -> Option<(usize, usize)> {
    let bad: Vec<usize> = (0..got.len()).filter(|&i| (got[i] as f64 - want[i]).abs() > 1e-5 + 1e-5 * want[i].abs()).collect();
    let first = *bad.first()?;
    bad.iter().all(|&i| got[i] == 0.0).then_some((first, bad.len() - 1))
}

const GRID_STRIDE: &str = "a grid-stride loop: i starts at blockIdx.x * blockDim.x + threadIdx.x and steps by the number \
     of threads in the whole grid, gridDim.x * blockDim.x, while i < n, so any grid visits every element exactly once";

/// `bias_relu(gpu, x, bias, blocks) -> x'`: `x'[i] = max(x[i] + bias, 0)`, on a grid of exactly
/// `blocks` blocks. The update is in place, so an element visited twice gets the bias twice.
pub fn bias_relu(f: impl Fn(&Gpu, &[f32], f32, u32) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "each element belongs to exactly one thread: step by the whole grid (gridDim.x * blockDim.x), not by \
             one block's worth, or threads of different blocks update the same element",
        ),
        out_of_bounds: Some("the loop condition (i < n) keeps every thread inside the array, on every trip"),
        launch_config: Some("the grid is the `blocks` asked for, of 256 threads each, whatever n is"),
        ..Default::default()
    };
    grade("ch03-grid-stride", |ctx| {
        let mut cases: Vec<(usize, String, u32)> = Vec::new();
        for (n, name) in sizes(&mut ctx.rng, 256, 100_003) {
            cases.push((n, name.clone(), 1));
            cases.push((n, name, 3));
        }
        cases.push((1000, "more threads than elements".into(), 64));
        for (n, name, blocks) in cases {
            let x = ctx.rng.vec_f32(n, -10.0, 10.0);
            let bias = ctx.rng.f32(0.5, 2.0);
            let input = format!("n = {n} ({name}), bias = {bias}, asked for {}", count(blocks as usize, "block"));
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &x, bias, blocks))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let launch = one_launch(&trace, "one bias_relu").map_err(|e| e.input(&input))?;
            if launch.grid != [blocks, 1, 1] {
                return Err(Failure::new(format!(
                    "the grader asked for a grid of {}; the launch had {}",
                    count(blocks as usize, "block"),
                    launch.describe()
                ))
                .concept("the grid is given: a grid-stride kernel covers any n with any grid, so the launch uses the `blocks` asked for")
                .input(&input));
            }
            let relu = |v: f64| v.max(0.0);
            let want: Vec<f64> = x.iter().map(|&v| relu(v as f64 + bias as f64)).collect();
            let Err(failure) = check_f32("x", &got, &want, Tolerance::F32) else {
                computed_on_the_device(&trace, "x", &got, &[("x", digest_of(&x))]).map_err(|e| e.input(&input))?;
                every_thread_its_share(ctx, &trace, n, launch.threads().0).map_err(|e| e.input(&input))?;
                continue;
            };
            let (threads, _) = launch.threads();
            let bad: Vec<usize> = (0..n).filter(|&i| (got[i] as f64 - want[i]).abs() > 1e-5 + 1e-5 * want[i].abs()).collect();
            let unchanged = bad.iter().filter(|&&i| got[i] == x[i]).count();
            let first = bad.first().copied().unwrap_or(0);
            let twice = |i: usize| (got[i] as f64 - relu(want[i] + bias as f64)).abs() <= 1e-4;
            let failure = if unchanged == bad.len() {
                let what = format!(
                    "x[{first}] was never updated{}",
                    if bad.len() > 1 { format!(" (nor were {} more elements)", bad.len() - 1) } else { String::new() }
                );
                let why = if first as u64 >= threads {
                    format!(
                        "the grid has {}, so element {first} waits for a thread's second trip or later; {GRID_STRIDE}",
                        count(threads as usize, "thread")
                    )
                } else {
                    GRID_STRIDE.to_string()
                };
                Failure { details: failure.details, ..Failure::new(what).concept(why) }
            } else if twice(first) {
                let what = format!("x[{first}] got the bias twice: two threads (or two trips of one) updated it");
                Failure { details: failure.details, ..Failure::new(what).concept(GRID_STRIDE) }
            } else {
                failure.concept(GRID_STRIDE)
            };
            return Err(failure.input(&input).detail(format!("the launch: {}", launch.describe())));
        }
        Ok(())
    })
}

/// A grid-stride loop spreads the elements over every thread of the grid: none handles more than
/// its share, ceil(n / threads), where one thread looping over everything handles n.
fn every_thread_its_share(ctx: &mut super::Ctx, trace: &Trace, n: usize, threads: u64) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that every thread of the grid did its share") else { return Ok(()) };
    let share = (n as u64).div_ceil(threads.max(1));
    let most = counts.iter().map(|c| c.per_thread_max.global_loads).max().unwrap_or(0);
    if most > share + 1 {
        return Err(Failure::new(format!(
            "one thread read {} of x where its share is {}: the grid's {} did not share the work",
            count(most as usize, "element"),
            share,
            count(threads as usize, "thread")
        ))
        .concept(GRID_STRIDE));
    }
    Ok(())
}

const TWO_D: &str = "a 2-D grid over a row-major matrix: x runs along a row (col = blockIdx.x * blockDim.x + \
     threadIdx.x), y down the rows (row = blockIdx.y * blockDim.y + threadIdx.y), ceil(cols / 16) × ceil(rows / 16) \
     blocks of 16 × 16";

/// `matrix_add(gpu, a, b, rows, cols) -> c`: C = A + B, row-major.
pub fn matrix_add(f: impl Fn(&Gpu, &[f32], &[f32], usize, usize) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        out_of_bounds: Some(
            "the guard checks both coordinates against their own limits: row < rows && col < cols (and the index is \
             row * cols + col)",
        ),
        launch_config: Some(TWO_D),
        ..Default::default()
    };
    grade("ch03-matrix-add", |ctx| {
        for (rows, cols, name) in shapes_2d(&mut ctx.rng) {
            let input = format!("{} × {} ({name})", count(rows, "row"), count(cols, "column"));
            let a = ctx.rng.vec_f32(rows * cols, -100.0, 100.0);
            let b = ctx.rng.vec_f32(rows * cols, -100.0, 100.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let c = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &a, &b, rows, cols))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let launch = one_launch(&trace, "one matrix add").map_err(|e| e.input(&input))?;
            let detail = format!("the launch: {}", launch.describe());
            if launch.block[1] < 2 {
                return Err(Failure::new("the blocks are 1-D; this exercise is about 2-D grids")
                    .concept(TWO_D)
                    .input(&input)
                    .detail(detail));
            }
            let (tx, ty) = launch.threads();
            let (r, c_) = (rows as u64, cols as u64);
            if tx < c_ || ty < r {
                let what = if tx >= r && ty >= c_ {
                    format!(
                        "the grid covers {} × {}: x and y are swapped (x should cover the {})",
                        count(ty as usize, "row"),
                        count(tx as usize, "column"),
                        count(cols, "column")
                    )
                } else {
                    format!("the grid covers {} × {} of a {rows} × {cols} matrix", count(ty as usize, "row"), count(tx as usize, "column"))
                };
                return Err(Failure::new(what).concept(TWO_D).input(&input).detail(detail));
            }
            let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| *x as f64 + *y as f64).collect();
            check_f32("c", &c, &want, Tolerance::F32).map_err(|e| {
                e.input(&input).detail(detail).concept(
                    "element (row, col) of a row-major matrix is at row * cols + col; col comes from x and row from y, \
                     and the guard checks both (row < rows && col < cols)",
                )
            })?;
            computed_on_the_device(&trace, "c", &c, &[("a", digest_of(&a)), ("b", digest_of(&b))]).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// Pixels of test images lie in 0..=240, so a 255 in an output is the poison pattern a kernel
/// never overwrote, not a value it computed.
const PIXEL_MAX: i32 = 241;

/// Image shapes as (width, height): the 2-D shapes with their names.
fn image_shapes(rng: &mut Rng) -> Vec<(usize, usize, String)> {
    shapes_2d(rng).into_iter().map(|(rows, cols, name)| (cols, rows, format!("{cols} × {rows} pixels ({name})"))).collect()
}

/// `rgb_to_gray(gpu, rgb, width, height) -> gray`: gray = 0.21 r + 0.72 g + 0.07 b, truncated.
pub fn rgb_to_gray(f: impl Fn(&Gpu, &[u8], usize, usize) -> Result<Vec<u8>>) -> GradeReport {
    let explain = Explain {
        out_of_bounds: Some(
            "pixel (row, col) is number row * width + col, and its channels are rgb[3 * pixel], rgb[3 * pixel + 1] and \
             rgb[3 * pixel + 2]; threads outside the image (col >= width or row >= height) do nothing",
        ),
        ..Default::default()
    };
    grade("ch03-rgb-to-gray", |ctx| {
        for (width, height, name) in image_shapes(&mut ctx.rng) {
            let rgb: Vec<u8> = ctx.rng.vec_i32(width * height * 3, 0, PIXEL_MAX).into_iter().map(|v| v as u8).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&name, &explain, || f(&ctx.gpu, &rgb, width, height))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            // The kernel computes in float32 (perhaps with fused multiply-adds) and truncates: it may
            // land one below or above a float64 reference.
            let want: Vec<u8> = rgb.chunks(3).map(|p| (0.21 * p[0] as f64 + 0.72 * p[1] as f64 + 0.07 * p[2] as f64) as u8).collect();
            check_bytes_within("gray", &got, &want, 1).map_err(|e| {
                e.input(&name).concept(
                    "one thread per pixel on a 2-D grid: pixel = row * width + col, and the channels are interleaved, so \
                     its red, green and blue bytes are rgb[3 * pixel], rgb[3 * pixel + 1], rgb[3 * pixel + 2]",
                )
            })?;
            computed_on_the_device(&trace, "gray", &got, &[("rgb", digest_of(&rgb))]).map_err(|e| e.input(&name))?;
        }
        Ok(())
    })
}

/// `blur(gpu, image, width, height, radius) -> blurred`: the integer mean of the pixels within
/// `radius` that lie inside the image.
pub fn blur(f: impl Fn(&Gpu, &[u8], usize, usize, usize) -> Result<Vec<u8>>) -> GradeReport {
    let explain = Explain {
        out_of_bounds: Some(
            "a neighbour (r, c) of a pixel near the edge may lie outside the image: check 0 <= r < height and \
             0 <= c < width before reading in[r * width + c]",
        ),
        ..Default::default()
    };
    grade("ch03-blur", |ctx| {
        for (k, (width, height, name)) in image_shapes(&mut ctx.rng).into_iter().enumerate() {
            let radius = 1 + k % 3;
            let input = format!("{name}, radius {radius}");
            let image: Vec<u8> = ctx.rng.vec_i32(width * height, 0, PIXEL_MAX).into_iter().map(|v| v as u8).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &image, width, height, radius))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want = box_blur(&image, width, height, radius);
            check_values("out", &got, &want, Some(255)).map_err(|e| {
                e.input(&input).concept(
                    "the mean of the neighbours inside the image: add up in[r * width + c] for the (r, c) within radius that \
                     lie inside, count them as you go, and divide by that count (a corner pixel has (radius + 1)² \
                     neighbours, not (2 radius + 1)²)",
                )
            })?;
            computed_on_the_device(&trace, "out", &got, &[("image", digest_of(&image))]).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

fn box_blur(image: &[u8], width: usize, height: usize, radius: usize) -> Vec<u8> {
    let (w, h, r) = (width as i64, height as i64, radius as i64);
    let mut out = Vec::with_capacity(image.len());
    for row in 0..h {
        for col in 0..w {
            let (mut sum, mut count) = (0i64, 0i64);
            for y in (row - r).max(0)..=(row + r).min(h - 1) {
                for x in (col - r).max(0)..=(col + r).min(w - 1) {
                    sum += image[(y * w + x) as usize] as i64;
                    count += 1;
                }
            }
            out.push((sum / count) as u8);
        }
    }
    out
}

/// Bytes against a reference, each within `tolerance` of it. A 255 (the poison byte; test images
/// never reach it) is an element the kernel never wrote.
fn check_bytes_within(name: &str, got: &[u8], want: &[u8], tolerance: u8) -> Result<(), Failure> {
    if got.len() != want.len() {
        return Err(Failure::new(format!("`{name}` came back with {}, expected {}", count(got.len(), "element"), want.len())));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i].abs_diff(want[i]) > tolerance).collect();
    let Some(&first) = bad.first() else { return Ok(()) };
    let unwritten = |i: usize| got[i] == 255;
    let what = if bad.iter().all(|&i| unwritten(i)) {
        let more = if bad.len() > 1 { format!(" (nor were {} more elements)", bad.len() - 1) } else { String::new() };
        format!("{name}[{first}] was never written{more}: every element needs a thread that stores it")
    } else {
        format!(
            "{} of {} of `{name}` {} wrong, the first at index {first}",
            bad.len(),
            count(got.len(), "element"),
            if bad.len() == 1 { "is" } else { "are" }
        )
    };
    let mut lines: Vec<String> = bad
        .iter()
        .take(5)
        .map(|&i| {
            format!(
                "{name}[{i}]: expected {} (± {tolerance}), got {}{}",
                want[i],
                got[i],
                if unwritten(i) { " (never written)" } else { "" }
            )
        })
        .collect();
    if bad.len() > 5 {
        lines.push(format!("... and {} more; the last wrong index is {}", bad.len() - 5, bad[bad.len() - 1]));
    }
    Err(Failure::new(what).detail(lines.join("\n")))
}
