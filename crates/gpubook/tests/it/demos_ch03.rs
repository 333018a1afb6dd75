//! Chapter 3's worked example (kernels/demos/spmd.cu and the host code the chapter shows) does
//! what the chapter says, for sizes around the block. Without a device each test prints SKIPPED.

use gpubook::gpu::{Gpu, LaunchConfig, Result, Source};
use gpubook::testing::{device_or_skip, root};

/// y = a * x on the device, one thread per element: the chapter's host code.
fn scale(gpu: &Gpu, x: &[f32], a: f32) -> Result<Vec<f32>> {
    let module = gpu.load_module(Source::file(root().join("kernels/demos/spmd.cu")))?;
    let f = module.load_function("scale")?;
    let stream = gpu.default_stream();
    // ANCHOR: scale_host
    let n = x.len();
    let block = 256;
    let grid = (n as u32).div_ceil(block); // ceil(n / block): whole blocks covering n
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    let x_d = stream.clone_htod(x)?;
    let mut y_d = stream.alloc_zeros::<f32>(n)?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&a).arg(&n_i);
    // SAFETY: x_d and y_d hold n floats and the kernel's i < n guard keeps the last
    // block's extra threads out.
    unsafe { launch.launch(cfg) }?;
    stream.clone_dtoh(&y_d)
    // ANCHOR_END: scale_host
}

#[test]
fn scale_covers_every_size_around_a_block() {
    let Some(gpu) = device_or_skip("scale_covers_every_size_around_a_block") else { return };
    for n in [1, 255, 256, 257, 100_003] {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        let y = scale(&gpu, &x, 1.5).unwrap();
        assert_eq!(y, x.iter().map(|v| 1.5 * v).collect::<Vec<_>>(), "n = {n}");
    }
}
