//! Chapter 3's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes; kernels wrong in ways no mutation reads well are in wrong/ beside this file.

use crate::grade::ch03;
use crate::grade::testing::{
    KERNEL_DOES_THE_WORK, Shows, cfg_2d, expect_failure, expect_failure_counted, expect_failure_showing, mutant, with_kernel, wrong_kernel,
};
use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};
use gpubook::testing::root;

/// A solution's kernel (for mistakes made on the host side).
fn solution(path: &str) -> Source {
    Source::file(root().join("solutions/kernels").join(path))
}

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
        // SAFETY: a_d, b_d, c_d hold n floats; the solution's kernel guards i < n, and the no-guard one
        // (wrong on purpose) reaches past n: the emulator's check mode stops it (a GPU: undefined).
        unsafe { launch.launch(cfg_2d((blocks(a.len()), 1), (256, 1))) }?;
        stream.clone_dtoh(&c_d)
    }
}

#[test]
fn vector_add_with_a_grid_rounded_down() {
    let floor = |n: usize| n as u32 / 256;
    expect_failure_showing("vector_add_with_a_grid_rounded_down", Shows::Everywhere, &["ceil(n / block)"], || {
        ch03::vector_add(vector_add(solution("ch03/vector_add.cu"), floor))
    });
}

#[test]
fn vector_add_without_the_guard() {
    let ceil = |n: usize| (n as u32).div_ceil(256);
    expect_failure_showing("vector_add_without_the_guard", Shows::OnTheEmulator, &["boundary guard", "if (i < n)"], || {
        ch03::vector_add(vector_add(wrong_kernel("ch03/vector_add_no_guard.cu"), ceil))
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
        // SAFETY: x_d holds n floats; each bias_relu here (solution, no loop, block stride) checks i < n.
        unsafe { launch.launch(cfg_2d((blocks, 1), (256, 1))) }?;
        stream.clone_dtoh(&x_d)
    }
}

#[test]
fn grid_stride_without_the_loop() {
    expect_failure_showing("grid_stride_without_the_loop", Shows::Everywhere, &["never updated", "grid-stride loop"], || {
        ch03::bias_relu(bias_relu(wrong_kernel("ch03/bias_relu_no_loop.cu")))
    });
}

#[test]
fn grid_stride_stepping_by_one_block() {
    expect_failure_showing("grid_stride_stepping_by_one_block", Shows::Everywhere, &["gridDim.x * blockDim.x"], || {
        ch03::bias_relu(bias_relu(wrong_kernel("ch03/bias_relu_block_stride.cu")))
    });
}

#[test]
fn grid_stride_ignoring_the_grid_asked_for() {
    // The kernel is right, but the host sizes the grid to the data instead of using `blocks`.
    let source = solution("ch03/bias_relu.cu");
    let host = move |gpu: &Gpu, x: &[f32], bias: f32, _blocks: u32| -> Result<Vec<f32>> {
        bias_relu(source.clone())(gpu, x, bias, (x.len() as u32).div_ceil(256))
    };
    expect_failure_showing("grid_stride_ignoring_the_grid_asked_for", Shows::Everywhere, &["the grid is given"], || ch03::bias_relu(host));
}

fn matrix_add(source: Source, grid: fn(usize, usize) -> (u32, u32)) -> impl Fn(&Gpu, &[f32], &[f32], usize, usize) -> Result<Vec<f32>> {
    move |gpu, a, b, rows, cols| {
        let f = gpu.load_module(source.clone())?.load_function("matrix_add")?;
        let stream = gpu.default_stream();
        let a_d = stream.clone_htod(a)?;
        let b_d = stream.clone_htod(b)?;
        // SAFETY: what the swap leaves unwritten reads back as poison (a valid f32); the grader reports it.
        let mut c_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
        let (r, c) = (rows as i32, cols as i32);
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&r).arg(&c);
        // SAFETY: a_d, b_d and c_d hold rows × cols floats, and both kernels check row < rows && col < cols
        // before touching element row × cols + col.
        unsafe { launch.launch(cfg_2d(grid(rows, cols), (16, 16))) }?;
        stream.clone_dtoh(&c_d)
    }
}

#[test]
fn matrix_add_with_row_and_column_swapped() {
    let grid = |rows: usize, cols: usize| ((cols as u32).div_ceil(16), (rows as u32).div_ceil(16));
    expect_failure_showing("matrix_add_with_row_and_column_swapped", Shows::Everywhere, &["never written", "col comes from x"], || {
        ch03::matrix_add(matrix_add(wrong_kernel("ch03/matrix_add_swapped.cu"), grid))
    });
}

#[test]
fn matrix_add_with_the_grid_dimensions_swapped() {
    // The kernel is right; the host puts the rows' blocks in x and the columns' in y.
    let grid = |rows: usize, cols: usize| ((rows as u32).div_ceil(16), (cols as u32).div_ceil(16));
    expect_failure_showing("matrix_add_with_the_grid_dimensions_swapped", Shows::Everywhere, &["x and y are swapped"], || {
        ch03::matrix_add(matrix_add(solution("ch03/matrix_add.cu"), grid))
    });
}

/// The image exercises' host code (given to the learner): 16 × 16 blocks over the image.
fn image_launch(gpu: &Gpu, source: &Source, kernel: &str, input: &[u8], pixels: usize, dims: &[i32]) -> Result<Vec<u8>> {
    let f = gpu.load_module(source.clone())?.load_function(kernel)?;
    let stream = gpu.default_stream();
    let in_d = stream.clone_htod(input)?;
    // SAFETY: the grid covers the w × h image, and both kernels write every pixel of out before it is read.
    let mut out_d = unsafe { stream.alloc::<u8>(pixels) }?;
    let (w, h) = (dims[0], dims[1]);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out_d);
    for d in dims {
        launch.arg(d);
    }
    // SAFETY: in_d holds the input (3 bytes a pixel for rgb_to_gray, 1 for blur) and out_d w × h bytes;
    // both kernels check col < w && row < h, and the planar one's pixel + 2 stays below 3 × w × h.
    unsafe { launch.launch(cfg_2d(((w as u32).div_ceil(16), (h as u32).div_ceil(16)), (16, 16))) }?;
    stream.clone_dtoh(&out_d)
}

#[test]
fn rgb_to_gray_with_planar_channels() {
    let source = wrong_kernel("ch03/rgb_to_gray_planar.cu");
    let host =
        move |gpu: &Gpu, rgb: &[u8], w: usize, h: usize| image_launch(gpu, &source, "rgb_to_gray", rgb, w * h, &[w as i32, h as i32]);
    expect_failure_showing("rgb_to_gray_with_planar_channels", Shows::Everywhere, &["interleaved", "rgb[3 * pixel]"], || {
        ch03::rgb_to_gray(host)
    });
}

#[test]
fn blur_dividing_by_the_whole_window() {
    let source = wrong_kernel("ch03/blur_fixed_divisor.cu");
    let host = move |gpu: &Gpu, image: &[u8], w: usize, h: usize, r: usize| {
        image_launch(gpu, &source, "blur", image, w * h, &[w as i32, h as i32, r as i32])
    };
    expect_failure_showing("blur_dividing_by_the_whole_window", Shows::Everywhere, &["inside the image", "count them"], || {
        ch03::blur(host)
    });
}

#[test]
fn vector_add_sent_up_as_the_answer() {
    let copy =
        "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) { (void)a; (void)b; (void)c; (void)n; }";
    expect_failure("vector_add_sent_up_as_the_answer", &["none of the inputs (a, b)", KERNEL_DOES_THE_WORK], || {
        ch03::vector_add(|gpu: &Gpu, a, b| -> Result<Vec<f32>> {
            let f = gpu.load_module(Source::text("vector_add.cu", copy))?.load_function("vector_add")?;
            let stream = gpu.default_stream();
            let a_d = stream.clone_htod(a)?;
            let b_d = stream.clone_htod(b)?;
            let sum: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
            let mut c_d = stream.clone_htod(&sum)?;
            let n = a.len() as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n);
            // SAFETY: this kernel touches none of its arguments.
            unsafe { launch.launch(LaunchConfig::for_num_elems(a.len() as u32)) }?;
            stream.clone_dtoh(&c_d)
        })
    });
}

#[test]
fn matrix_add_finished_on_the_host() {
    let idle = mutant("ch03/matrix_add.cu", &[("c[i] = a[i] + b[i];", "")]);
    expect_failure("matrix_add_finished_on_the_host", &["`c` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch03::matrix_add(|gpu, a, b, rows, cols| {
            with_kernel(gpu, "ch03/matrix_add.cu", idle.clone(), || solutions::ch03::matrix_add(gpu, a, b, rows, cols))?;
            Ok(a.iter().zip(b).map(|(x, y)| x + y).collect())
        })
    });
}

/// A grid sized for the sizes a learner might test with (400 blocks of 256 threads cover 100,000
/// elements), not for the n it is given: the grader's seeded large size is larger.
#[test]
fn vector_add_with_a_fixed_grid() {
    expect_failure("vector_add_with_a_fixed_grid", &["drawn from the seed", "ceil(n / block)"], || {
        ch03::vector_add(|gpu: &Gpu, a, b| -> Result<Vec<f32>> {
            let f = gpu
                .load_module(Source::file(gpubook::testing::workspace_file("solutions/kernels/ch03/vector_add.cu")))?
                .load_function("vector_add")?;
            let stream = gpu.default_stream();
            let (a_d, b_d) = (stream.clone_htod(a)?, stream.clone_htod(b)?);
            let mut c_d = stream.alloc_zeros::<f32>(a.len())?;
            let n = a.len() as i32;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n);
            // SAFETY: a_d, b_d and c_d hold n floats and vector_add's i < n guard keeps all 400 × 256
            // threads inside them, whatever n is.
            unsafe { launch.launch(LaunchConfig { grid_dim: (400, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }?;
            stream.clone_dtoh(&c_d)
        })
    });
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
