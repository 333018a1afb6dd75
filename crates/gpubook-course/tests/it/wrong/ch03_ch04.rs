//! The graders of chapters 3 and 4 against plausible wrong answers: each must fail, and its
//! report must name the concept the mistake is about. A grader that cannot fail is a bug.
//!
//! The wrong kernels live in tests/wrong/ch03/ and tests/wrong/ch04/; the host code around them
//! mirrors the solutions'. Some mistakes (a missing guard, a missing `__syncthreads`) are caught
//! for certain only by the emulator, whose check mode reports every out-of-bounds access and
//! every race; on a GPU the result may happen to come out right, and those tests then print a
//! note instead of failing. Without a device every test prints SKIPPED.

use gpubook::gpu::{BackendKind, Gpu, LaunchConfig, Result, Source};
use gpubook::testing::{device_or_skip, root};
use gpubook_course::grade::GradeReport;
use gpubook_course::grade::{ch03, ch04, report_of};

/// A wrong kernel under tests/wrong/.
fn wrong(path: &str) -> Source {
    Source::file(root().join("crates/gpubook-course/tests/wrong").join(path))
}

/// A solution's kernel (for mistakes made on the host side).
fn solution(path: &str) -> Source {
    Source::file(root().join("solutions/kernels").join(path))
}

/// Whether a GPU always shows the mistake, or only the emulator is sure to.
#[derive(Clone, Copy, PartialEq)]
enum Shows {
    Everywhere,
    OnTheEmulator,
}

/// Runs `grader` on a wrong answer and checks that it fails with a report naming `concept`
/// (every one of the phrases given).
fn expect_failure(test: &str, shows: Shows, concept: &[&str], grader: impl FnOnce() -> GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    let report = match report_of(grader) {
        Some(report) => report,
        None if shows == Shows::OnTheEmulator && gpu.backend() != BackendKind::Emulator => {
            println!(
                "NOTE {test}: this wrong answer passed on the GPU ({}): the mistake happened not to change the result",
                gpu.info().name
            );
            return;
        }
        None => panic!("{test}: the grader passed a wrong answer"),
    };
    println!("{test}: the grader said:{report}");
    for phrase in concept {
        assert!(report.contains(phrase), "{test}: the report should name `{phrase}`:{report}");
    }
}

fn cfg(grid: (u32, u32), block: (u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid.0, grid.1, 1), block_dim: (block.0, block.1, 1), shared_mem_bytes: 0 }
}

// ---- chapter 3 -------------------------------------------------------------------------------

/// vector_add's host code, with the grid size chosen by `blocks(n)`.
fn vector_add(source: Source, blocks: fn(usize) -> u32) -> impl Fn(&Gpu, &[f32], &[f32]) -> Result<Vec<f32>> {
    move |gpu, a, b| {
        let f = gpu.load_module(source.clone())?.load_function("vector_add")?;
        let stream = gpu.default_stream();
        let a_d = stream.clone_htod(a)?;
        let b_d = stream.clone_htod(b)?;
        let mut c_d = stream.alloc_zeros::<f32>(a.len())?;
        let n = a.len() as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n);
        unsafe { launch.launch(cfg((blocks(a.len()), 1), (256, 1))) }?;
        stream.clone_dtoh(&c_d)
    }
}

#[test]
fn vector_add_with_a_grid_rounded_down() {
    let floor = |n: usize| n as u32 / 256;
    expect_failure("vector_add_with_a_grid_rounded_down", Shows::Everywhere, &["ceil(n / block)"], || {
        ch03::vector_add(vector_add(solution("ch03/vector_add.cu"), floor))
    });
}

#[test]
fn vector_add_without_the_guard() {
    let ceil = |n: usize| (n as u32).div_ceil(256);
    expect_failure("vector_add_without_the_guard", Shows::OnTheEmulator, &["boundary guard", "if (i < n)"], || {
        ch03::vector_add(vector_add(wrong("ch03/vector_add_no_guard.cu"), ceil))
    });
}

fn bias_relu(source: Source) -> impl Fn(&Gpu, &[f32], f32, u32) -> Result<Vec<f32>> {
    move |gpu, x, bias, blocks| {
        let f = gpu.load_module(source.clone())?.load_function("bias_relu")?;
        let stream = gpu.default_stream();
        let mut x_d = stream.clone_htod(x)?;
        let n = x.len() as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut x_d).arg(&bias).arg(&n);
        unsafe { launch.launch(cfg((blocks, 1), (256, 1))) }?;
        stream.clone_dtoh(&x_d)
    }
}

#[test]
fn grid_stride_without_the_loop() {
    expect_failure("grid_stride_without_the_loop", Shows::Everywhere, &["never updated", "grid-stride loop"], || {
        ch03::bias_relu(bias_relu(wrong("ch03/bias_relu_no_loop.cu")))
    });
}

#[test]
fn grid_stride_stepping_by_one_block() {
    expect_failure("grid_stride_stepping_by_one_block", Shows::Everywhere, &["gridDim.x * blockDim.x"], || {
        ch03::bias_relu(bias_relu(wrong("ch03/bias_relu_block_stride.cu")))
    });
}

#[test]
fn grid_stride_ignoring_the_grid_asked_for() {
    // The kernel is right, but the host sizes the grid to the data instead of using `blocks`.
    let source = solution("ch03/bias_relu.cu");
    let host = move |gpu: &Gpu, x: &[f32], bias: f32, _blocks: u32| -> Result<Vec<f32>> {
        bias_relu(source.clone())(gpu, x, bias, (x.len() as u32).div_ceil(256))
    };
    expect_failure("grid_stride_ignoring_the_grid_asked_for", Shows::Everywhere, &["the grid is given"], || ch03::bias_relu(host));
}

fn matrix_add(source: Source, grid: fn(usize, usize) -> (u32, u32)) -> impl Fn(&Gpu, &[f32], &[f32], usize, usize) -> Result<Vec<f32>> {
    move |gpu, a, b, rows, cols| {
        let f = gpu.load_module(source.clone())?.load_function("matrix_add")?;
        let stream = gpu.default_stream();
        let a_d = stream.clone_htod(a)?;
        let b_d = stream.clone_htod(b)?;
        let mut c_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
        let (r, c) = (rows as i32, cols as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&r).arg(&c);
        unsafe { launch.launch(cfg(grid(rows, cols), (16, 16))) }?;
        stream.clone_dtoh(&c_d)
    }
}

#[test]
fn matrix_add_with_row_and_column_swapped() {
    let grid = |rows: usize, cols: usize| ((cols as u32).div_ceil(16), (rows as u32).div_ceil(16));
    expect_failure("matrix_add_with_row_and_column_swapped", Shows::Everywhere, &["never written", "col comes from x"], || {
        ch03::matrix_add(matrix_add(wrong("ch03/matrix_add_swapped.cu"), grid))
    });
}

#[test]
fn matrix_add_with_the_grid_dimensions_swapped() {
    // The kernel is right; the host puts the rows' blocks in x and the columns' in y.
    let grid = |rows: usize, cols: usize| ((rows as u32).div_ceil(16), (cols as u32).div_ceil(16));
    expect_failure("matrix_add_with_the_grid_dimensions_swapped", Shows::Everywhere, &["x and y are swapped"], || {
        ch03::matrix_add(matrix_add(solution("ch03/matrix_add.cu"), grid))
    });
}

/// The image exercises' host code (given to the learner): 16 × 16 blocks over the image.
fn image_launch(gpu: &Gpu, source: &Source, kernel: &str, input: &[u8], pixels: usize, dims: &[i32]) -> Result<Vec<u8>> {
    let f = gpu.load_module(source.clone())?.load_function(kernel)?;
    let stream = gpu.default_stream();
    let in_d = stream.clone_htod(input)?;
    let mut out_d = unsafe { stream.alloc::<u8>(pixels) }?;
    let (w, h) = (dims[0], dims[1]);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out_d);
    for d in dims {
        launch.arg(d);
    }
    unsafe { launch.launch(cfg(((w as u32).div_ceil(16), (h as u32).div_ceil(16)), (16, 16))) }?;
    stream.clone_dtoh(&out_d)
}

#[test]
fn rgb_to_gray_with_planar_channels() {
    let source = wrong("ch03/rgb_to_gray_planar.cu");
    let host =
        move |gpu: &Gpu, rgb: &[u8], w: usize, h: usize| image_launch(gpu, &source, "rgb_to_gray", rgb, w * h, &[w as i32, h as i32]);
    expect_failure("rgb_to_gray_with_planar_channels", Shows::Everywhere, &["interleaved", "rgb[3 * pixel]"], || ch03::rgb_to_gray(host));
}

#[test]
fn blur_dividing_by_the_whole_window() {
    let source = wrong("ch03/blur_fixed_divisor.cu");
    let host = move |gpu: &Gpu, image: &[u8], w: usize, h: usize, r: usize| {
        image_launch(gpu, &source, "blur", image, w * h, &[w as i32, h as i32, r as i32])
    };
    expect_failure("blur_dividing_by_the_whole_window", Shows::Everywhere, &["inside the image", "count them"], || ch03::blur(host));
}

// ---- chapter 4 -------------------------------------------------------------------------------

/// tiled_matmul's host code (given to the learner), with the kernel from `source`.
fn tiled_matmul(source: &Source, gpu: &Gpu, a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Result<Vec<f32>> {
    let f = gpu.load_module(source.clone())?.load_function("tiled_matmul")?;
    let stream = gpu.default_stream();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    let mut c_d = unsafe { stream.alloc::<f32>(m * n) }?;
    let (m_i, k_i, n_i) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&m_i).arg(&k_i).arg(&n_i);
    unsafe { launch.launch(cfg(((n as u32).div_ceil(16), (m as u32).div_ceil(16)), (16, 16))) }?;
    stream.clone_dtoh(&c_d)
}

#[test]
fn tiled_matmul_with_one_barrier_per_tile() {
    expect_failure("tiled_matmul_with_one_barrier_per_tile", Shows::OnTheEmulator, &["__syncthreads"], || {
        let source = wrong("ch04/tiled_matmul_one_sync.cu");
        ch04::tiled_matmul(|gpu, a, b, m, k, n| tiled_matmul(&source, gpu, a, b, m, k, n))
    });
}

#[test]
fn tiled_matmul_without_zero_padding() {
    expect_failure("tiled_matmul_without_zero_padding", Shows::Everywhere, &["zero"], || {
        let source = wrong("ch04/tiled_matmul_no_padding.cu");
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
            let mut sums = unsafe { stream.alloc::<f32>(blocks) }?;
            let n = values.len() as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&values).arg(&mut sums).arg(&n);
            unsafe { launch.launch(LaunchConfig { shared_mem_bytes, ..cfg((blocks as u32, 1), (256, 1)) }) }?;
            values = sums;
            if blocks == 1 {
                return Ok(stream.clone_dtoh(&values)?[0]);
            }
        }
    }
}

#[test]
fn reduce_tree_without_barriers_between_steps() {
    expect_failure("reduce_tree_without_barriers_between_steps", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::reduce_tree(reduce(wrong("ch04/reduce_tree_no_sync.cu"), "reduce_tree", 256 * 4))
    });
}

#[test]
fn reduce_warp_with_shuffle_offsets_from_32() {
    expect_failure("reduce_warp_with_shuffle_offsets_from_32", Shows::Everywhere, &["times too large", "offsets 16, 8, 4, 2, 1"], || {
        ch04::reduce_warp(reduce(wrong("ch04/reduce_warp_offset_32.cu"), "reduce_warp", 0))
    });
}

#[test]
fn reduce_warp_without_a_barrier_before_warp_0_reads() {
    expect_failure("reduce_warp_without_a_barrier_before_warp_0_reads", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::reduce_warp(reduce(wrong("ch04/reduce_warp_no_sync.cu"), "reduce_warp", 0))
    });
}

fn transpose(source: Source) -> impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>> {
    move |gpu, m, rows, cols| {
        let f = gpu.load_module(source.clone())?.load_function("transpose")?;
        let stream = gpu.default_stream();
        let in_d = stream.clone_htod(m)?;
        let mut out_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
        let (r, c) = (rows as i32, cols as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&in_d).arg(&mut out_d).arg(&r).arg(&c);
        unsafe { launch.launch(cfg(((cols as u32).div_ceil(32), (rows as u32).div_ceil(32)), (32, 32))) }?;
        stream.clone_dtoh(&out_d)
    }
}

#[test]
fn transpose_without_a_barrier() {
    expect_failure("transpose_without_a_barrier", Shows::OnTheEmulator, &["__syncthreads"], || {
        ch04::transpose(transpose(wrong("ch04/transpose_no_sync.cu")))
    });
}

#[test]
fn transpose_guarding_the_write_with_the_input_sizes() {
    expect_failure("transpose_guarding_the_write_with_the_input_sizes", Shows::Everywhere, &["x' < rows"], || {
        ch04::transpose(transpose(wrong("ch04/transpose_input_guard.cu")))
    });
}
