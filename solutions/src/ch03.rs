//! Chapter 3: SPMD and indexing.

use gpubook::gpu::{Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: vector_add
/// c[i] = a[i] + b[i] on the GPU.
pub fn vector_add(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch03/vector_add.cu"))?;
    let f = module.load_function("vector_add")?;
    let stream = gpu.default_stream();
    // SOLUTION
    let n = a.len();
    let a_d = stream.clone_htod(a)?;
    let b_d = stream.clone_htod(b)?;
    let mut c_d = stream.alloc_zeros::<f32>(n)?;
    let block = 256u32;
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&c_d)
    // STUB
    // todo!("copy a and b to the device, allocate c, choose the grid, launch, copy c back")
    // END SOLUTION
}
// ANCHOR_END: vector_add
