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
    // SOLUTION
    let n = x.len();
    // cudaMalloc + cudaMemcpy(HostToDevice), once per input.
    let x_d = stream.clone_htod(x)?;
    let mut y_d = stream.clone_htod(y)?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a).arg(&x_d).arg(&mut y_d).arg(&n_i);
    // SAFETY: the kernel touches elements below n, and both buffers hold n.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    // cudaMemcpy(DeviceToHost) into the caller's slice: only y changed, so only y comes back.
    stream.memcpy_dtoh(&y_d, y)?;
    // x_d and y_d go out of scope here: two cudaFree.
    Ok(())
    // STUB
    // todo!("copy x and y to the device, launch `f` over the n elements, copy y back into `y`")
    // END SOLUTION
}
// ANCHOR_END: axpy

// ANCHOR: normalize
/// Pixels (0..=255) to floats in [0, 1]: `out[i] = pixels[i] / 255`, on the device.
pub fn normalize(gpu: &Gpu, pixels: &[u8]) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/to_unit.cu"))?;
    let f = module.load_function("to_unit")?;
    let stream = gpu.default_stream();
    // SOLUTION
    let n = pixels.len();
    // n bytes cross the bus: send the compact u8s and widen them on the device.
    let pixels_d = stream.clone_htod(pixels)?;
    // Sizes in gpubook (and cudarc) count elements of the type: n f32s are 4n bytes.
    // SAFETY: the kernel writes all n elements before they are read.
    let mut out_d = unsafe { stream.alloc::<f32>(n) }?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&pixels_d).arg(&mut out_d).arg(&n_i);
    // SAFETY: both buffers hold n elements and the kernel stays below n.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    stream.clone_dtoh(&out_d)
    // STUB
    // todo!("copy the pixels to the device as they are, allocate n f32s for the result, launch `f`, copy the result back")
    // END SOLUTION
}
// ANCHOR_END: normalize

// ANCHOR: fill
/// A vector of `n` copies of `value`, made on the device.
pub fn fill(gpu: &Gpu, n: usize, value: f32) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/fill.cu"))?;
    let f = module.load_function("fill")?;
    let stream = gpu.default_stream();
    // SOLUTION
    // Nothing to copy in: the value travels as a kernel argument, not as n copies over the bus.
    // A memset would not do either: it writes one byte value into every byte.
    // SAFETY: the kernel writes all n elements before they are read.
    let mut out_d = unsafe { stream.alloc::<f32>(n) }?;
    let n_i = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut out_d).arg(&value).arg(&n_i);
    // SAFETY: the buffer holds n elements and the kernel stays below n.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    stream.clone_dtoh(&out_d)
    // STUB
    // todo!("allocate n f32s on the device, launch `f` to write `value` into each, copy them back")
    // END SOLUTION
}
// ANCHOR_END: fill

// ANCHOR: smooth
/// Applies the `smooth` kernel `k` times to `x`. The data crosses to the device once and comes back
/// once; in between, the k launches take turns on two device buffers.
pub fn smooth(gpu: &Gpu, x: &[f32], k: usize) -> Result<Vec<f32>> {
    let module = gpu.load_module(kernel!("ch02/smooth.cu"))?;
    let f = module.load_function("smooth")?;
    let stream = gpu.default_stream();
    // SOLUTION
    let n = x.len();
    let mut cur = stream.clone_htod(x)?;
    // SAFETY: each step writes all n elements of `next` before anything reads them.
    let mut next = unsafe { stream.alloc::<f32>(n) }?;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let n_i = n as i32;
    for _ in 0..k {
        let mut launch = stream.launch_builder(&f);
        launch.arg(&cur).arg(&mut next).arg(&n_i);
        // SAFETY: both buffers hold n elements and the kernel stays below n.
        unsafe { launch.launch(cfg) }?;
        // This step's output is the next one's input. Launches on one stream run in order, so
        // nothing needs to wait, and swapping the two handles moves no data.
        std::mem::swap(&mut cur, &mut next);
    }
    stream.clone_dtoh(&cur)
    // STUB
    // todo!("copy x to the device once, launch `f` k times between two device buffers, copy the result back once")
    // END SOLUTION
}
// ANCHOR_END: smooth
