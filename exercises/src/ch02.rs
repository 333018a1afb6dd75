//! Chapter 2: device memory. The device has its own memory; data gets there and back only by
//! explicit copies, which are slow next to the device's own bandwidth. Each exercise practises one
//! habit: copy each thing once and in the right direction, size buffers in elements of the right
//! type, fill memory on the device, and keep data there while kernels work on it.
//!
//! The kernels are complete (`kernels/ch02/`); the exercises are the host code.

use gpubook::gpu::{Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: axpy
// ANCHOR: axpy_given
/// y ← a·x + y, computed on the device and written back into the caller's `y`.
pub fn axpy(gpu: &Gpu, a: f32, x: &[f32], y: &mut [f32]) -> Result<()> {
    let module = gpu.load_module(kernel!("ch02/axpy.cu"))?;
    let f = module.load_function("axpy")?;
    let stream = gpu.default_stream();
    // ANCHOR_END: axpy_given
    todo!("copy x and y to the device, launch `f` over the n elements, copy y back into `y`")
}
// ANCHOR_END: axpy

// ANCHOR: normalize
/// Pixels (0..=255) to floats in [0, 1]: `out[i] = pixels[i] / 255`, on the device.
pub fn normalize(gpu: &Gpu, pixels: &[u8]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/to_unit.cu"))?;
    let f = module.load_function("to_unit")?;
    let stream = gpu.default_stream();
    todo!("copy the pixels to the device as they are, allocate n f32s for the result, launch `f`, copy the result back")
}
// ANCHOR_END: normalize

// ANCHOR: fill
/// A vector of `n` copies of `value`, made on the device.
pub fn fill(gpu: &Gpu, n: usize, value: f32) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/fill.cu"))?;
    let f = module.load_function("fill")?;
    let stream = gpu.default_stream();
    todo!("allocate n f32s on the device, launch `f` to write `value` into each, copy them back")
}
// ANCHOR_END: fill

// ANCHOR: smooth
/// Applies the `smooth` kernel `k` times to `x`. The data crosses to the device once and comes back
/// once; in between, the k launches take turns on two device buffers.
pub fn smooth(gpu: &Gpu, x: &[f32], k: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/smooth.cu"))?;
    let f = module.load_function("smooth")?;
    let stream = gpu.default_stream();
    todo!("copy x to the device once, launch `f` k times between two device buffers, copy the result back once")
}
// ANCHOR_END: smooth
