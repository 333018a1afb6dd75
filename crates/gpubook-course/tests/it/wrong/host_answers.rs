//! Answers that get the numbers without doing what the exercise teaches: the kernel does nothing
//! (a mutation of the solution's kernel) and the host computes the result, or the host computes
//! it and sends it to the device to be copied back. Each must fail, with a report that names
//! the concept: the kernel does the work.

use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};
use gpubook_course::grade::{ch01, ch02, ch03, ch04};
use gpubook_course::testing::{expect_failure, mutant, with_kernel};

const CONCEPT: &str = "the kernel does the work";

/// who_am_i's kernel with its stores taken out, and the answer worked out on the host.
#[test]
fn who_am_i_computed_on_the_host() {
    let idle = mutant("ch01/who_am_i.cu", &[("block[i] = blockIdx.x;", ""), ("thread[i] = threadIdx.x;", "")]);
    expect_failure("who_am_i_computed_on_the_host", &["`block` is not what came back", CONCEPT], || {
        ch01::who_am_i(|gpu, n, block| {
            with_kernel(gpu, "ch01/who_am_i.cu", idle.clone(), || solutions::ch01::who_am_i(gpu, n, block))?;
            let b = block as usize;
            Ok(((0..n).map(|i| (i / b) as i32).collect(), (0..n).map(|i| (i % b) as i32).collect()))
        })
    });
}

/// The host computes `out`, uploads it and has a kernel that stores nothing "touch" it.
#[test]
fn first_launch_uploaded_from_the_host() {
    expect_failure("first_launch_uploaded_from_the_host", &["where the exercise gives no data to copy", CONCEPT], || {
        ch01::first_launch(|gpu, grid, block| {
            let f = gpu
                .load_module(Source::text("touch.cu", "extern \"C\" __global__ void hello(int* out) { (void)out; }"))?
                .load_function("hello")?;
            let stream = gpu.default_stream();
            let b = block as usize;
            let out: Vec<i32> = (0..grid as usize * b).map(|i| ((i / b) * 10000 + i % b) as i32).collect();
            let mut out_d = stream.clone_htod(&out)?;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut out_d);
            unsafe { launch.launch(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }) }?;
            stream.clone_dtoh(&out_d)
        })
    });
}

#[test]
fn axpy_finished_on_the_host() {
    let idle = mutant("ch02/axpy.cu", &[("if (i < n) y[i] = a * x[i] + y[i];", "(void)i;")]);
    expect_failure("axpy_finished_on_the_host", &["`y` is not what came back", CONCEPT], || {
        ch02::axpy(|gpu, a, x, y| {
            let before = y.to_vec();
            with_kernel(gpu, "ch02/axpy.cu", idle.clone(), || solutions::ch02::axpy(gpu, a, x, y))?;
            for i in 0..y.len() {
                y[i] = a * x[i] + before[i];
            }
            Ok(())
        })
    });
}

thread_local! {
    static IDLE_TO_UNIT: String = mutant("ch02/to_unit.cu", &[("if (i < n) out[i] = pixels[i] / 255.0f;", "(void)i;")]);
}

#[test]
fn normalize_on_the_host() {
    expect_failure("normalize_on_the_host", &["`out` is not what came back", CONCEPT], || {
        ch02::normalize(|gpu, pixels| {
            // The copies and a launch, for show, of a kernel that stores nothing.
            with_kernel(gpu, "ch02/to_unit.cu", IDLE_TO_UNIT.with(Clone::clone), || solutions::ch02::normalize(gpu, pixels))?;
            Ok(pixels.iter().map(|&p| p as f32 / 255.0).collect())
        })
    });
}

#[test]
fn vector_add_sent_up_as_the_answer() {
    let copy =
        "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) { (void)a; (void)b; (void)c; (void)n; }";
    expect_failure("vector_add_sent_up_as_the_answer", &["none of the inputs (a, b)", CONCEPT], || {
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
            unsafe { launch.launch(LaunchConfig::for_num_elems(a.len() as u32)) }?;
            stream.clone_dtoh(&c_d)
        })
    });
}

#[test]
fn matrix_add_finished_on_the_host() {
    let idle = mutant("ch03/matrix_add.cu", &[("c[i] = a[i] + b[i];", "")]);
    expect_failure("matrix_add_finished_on_the_host", &["`c` is not what came back", CONCEPT], || {
        ch03::matrix_add(|gpu, a, b, rows, cols| {
            with_kernel(gpu, "ch03/matrix_add.cu", idle.clone(), || solutions::ch03::matrix_add(gpu, a, b, rows, cols))?;
            Ok(a.iter().zip(b).map(|(x, y)| x + y).collect())
        })
    });
}

#[test]
fn transpose_on_the_host() {
    expect_failure("transpose_on_the_host", &["came back exactly as it had been copied to the device", CONCEPT], || {
        ch04::transpose(|gpu, m, rows, cols| {
            solutions::ch04::transpose(gpu, m, rows, cols)?;
            let mut t = vec![0.0f32; rows * cols];
            for r in 0..rows {
                for c in 0..cols {
                    t[c * rows + r] = m[r * cols + c];
                }
            }
            // A copy of the right answer is still the host's answer: send it round the device.
            let stream = gpu.default_stream();
            let t_d = stream.clone_htod(&t)?;
            stream.clone_dtoh(&t_d)
        })
    });
}

/// The tree's kernel reports 0 for every block, and the host sums x itself.
#[test]
fn reduction_finished_on_the_host() {
    let zero = mutant("ch04/reduce_tree.cu", &[("block_sums[blockIdx.x] = partial[0];", "block_sums[blockIdx.x] = 0.0f;")]);
    expect_failure("reduction_finished_on_the_host", &["`the sum` is not what came back", CONCEPT], || {
        ch04::reduce_tree(|gpu, x| {
            with_kernel(gpu, "ch04/reduce_tree.cu", zero.clone(), || solutions::ch04::reduce_tree(gpu, x))?;
            Ok(x.iter().map(|&v| v as f64).sum::<f64>() as f32)
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
            unsafe { launch.launch(LaunchConfig { grid_dim: (400, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }?;
            stream.clone_dtoh(&c_d)
        })
    });
}
