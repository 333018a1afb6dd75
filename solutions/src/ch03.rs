//! Chapter 3: SPMD and indexing.
//!
//! One program, many threads: every thread of a launch runs the same kernel, and tells itself
//! apart from the others only by its coordinates (`blockIdx`, `threadIdx`). These exercises
//! turn coordinates into the element a thread owns, in one dimension and in two, choose grids
//! that cover the data, and guard the threads that fall past its end.

use gpubook::gpu::{Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: vector_add
/// c[i] = a[i] + b[i] on the GPU, one thread per element.
pub fn vector_add(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch03/vector_add.cu"))?;
    let f = module.load_function("vector_add")?;
    let stream = gpu.default_stream();
    // SOLUTION
    // ANCHOR: vector_add_host
    let n = a.len();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    let mut c_d = stream.alloc_zeros::<f32>(n)?;
    let block = 256u32;
    let cfg = LaunchConfig {
        grid_dim: ((n as u32).div_ceil(block), 1, 1), // ceil(n / block) blocks: none left over
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&c_d)
    // ANCHOR_END: vector_add_host
    // STUB
    // todo!("copy a and b to the device, allocate c, choose the grid, launch, copy c back")
    // END SOLUTION
}
// ANCHOR_END: vector_add

// ANCHOR: bias_relu
/// x ← max(x + bias, 0), launched with exactly `blocks` blocks of 256 threads whatever the
/// length of x: the kernel's grid-stride loop lets any grid cover any n. Returns the new x.
pub fn bias_relu(gpu: &Gpu, x: &[f32], bias: f32, blocks: u32) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch03/bias_relu.cu"))?;
    let f = module.load_function("bias_relu")?;
    let stream = gpu.default_stream();
    let mut x_d = stream.clone_htod(x)?;
    // SOLUTION
    // ANCHOR: bias_relu_config
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    // ANCHOR_END: bias_relu_config
    // STUB
    // let cfg: LaunchConfig = todo!("a grid of `blocks` blocks of 256 threads, whatever n is");
    // END SOLUTION
    let n = x.len() as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut x_d).arg(&bias).arg(&n);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&x_d)
}
// ANCHOR_END: bias_relu

// ANCHOR: matrix_add
/// C = A + B for `rows × cols` matrices stored row-major, on a 2-D grid of 16 × 16 blocks.
pub fn matrix_add(gpu: &Gpu, a: &[f32], b: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch03/matrix_add.cu"))?;
    let f = module.load_function("matrix_add")?;
    let stream = gpu.default_stream();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    // SAFETY: the kernel writes every element of c before it is copied back (graders fill new
    // allocations with a NaN pattern, so an element it misses shows as "never written").
    let mut c_d = unsafe { stream.alloc::<f32>(rows * cols) }?;
    // SOLUTION
    // ANCHOR: matrix_add_config
    let block = 16u32;
    let cfg = LaunchConfig {
        grid_dim: ((cols as u32).div_ceil(block), (rows as u32).div_ceil(block), 1), // x: columns, y: rows
        block_dim: (block, block, 1),
        shared_mem_bytes: 0,
    };
    // ANCHOR_END: matrix_add_config
    // STUB
    // let cfg: LaunchConfig = todo!("16 × 16 blocks, and enough of them in x to cover the columns and in y the rows");
    // END SOLUTION
    let (rows_i, cols_i) = (rows as i32, cols as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&rows_i).arg(&cols_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&c_d)
}
// ANCHOR_END: matrix_add

// ANCHOR: image_config
/// A 2-D launch of 16 × 16 blocks covering a `width × height` image: x along a row, y down.
fn image_grid(width: usize, height: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((width as u32).div_ceil(16), (height as u32).div_ceil(16), 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 }
}
// ANCHOR_END: image_config

// ANCHOR: rgb_to_gray
/// A `width × height` RGB image (3 interleaved bytes a pixel) to grayscale (1 byte a pixel).
pub fn rgb_to_gray(gpu: &Gpu, rgb: &[u8], width: usize, height: usize) -> Result<Vec<u8>> {
    let module = gpu.load_module(kernel!("ch03/rgb_to_gray.cu"))?;
    let f = module.load_function("rgb_to_gray")?;
    let stream = gpu.default_stream();
    let rgb_d = stream.clone_htod(rgb)?;
    // SAFETY: the kernel writes every pixel before the image is copied back.
    let mut gray_d = unsafe { stream.alloc::<u8>(width * height) }?;
    let (w, h) = (width as i32, height as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&rgb_d).arg(&mut gray_d).arg(&w).arg(&h);
    unsafe { launch.launch(image_grid(width, height)) }?;
    stream.clone_dtoh(&gray_d)
}
// ANCHOR_END: rgb_to_gray

// ANCHOR: blur
/// A box blur of a `width × height` grayscale image: each pixel becomes the mean of its
/// neighbours within `radius`, counting only those inside the image.
pub fn blur(gpu: &Gpu, image: &[u8], width: usize, height: usize, radius: usize) -> Result<Vec<u8>> {
    let module = gpu.load_module(kernel!("ch03/blur.cu"))?;
    let f = module.load_function("blur")?;
    let stream = gpu.default_stream();
    let in_d = stream.clone_htod(image)?;
    // SAFETY: the kernel writes every pixel before the image is copied back.
    let mut out_d = unsafe { stream.alloc::<u8>(width * height) }?;
    let (w, h, r) = (width as i32, height as i32, radius as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out_d).arg(&w).arg(&h).arg(&r);
    unsafe { launch.launch(image_grid(width, height)) }?;
    stream.clone_dtoh(&out_d)
}
// ANCHOR_END: blur
