//! Chapter 3: SPMD and indexing.

use gpubook::gpu::{Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: vector_add
/// c[i] = a[i] + b[i] on the GPU.
pub fn vector_add(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch03/vector_add.cu"))?;
    let f = module.load_function("vector_add")?;
    let stream = gpu.default_stream();
    todo!("copy a and b to the device, allocate c, choose the grid, launch, copy c back")
}
// ANCHOR_END: vector_add
