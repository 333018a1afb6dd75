//! Chapter 8: double buffering.
//!
//! Two buffers, used in turn, let the next piece of work start while the current one is still
//! using its buffer: the copy of chunk i+1 runs while chunk i is computed. The price is a rule:
//! a buffer may be reused only once everything that used it last time is done. The first
//! exercise keeps that rule with streams and events; the second with signal words inside a
//! kernel, as DeepEP's low-latency buffers do.

use gpubook::gpu::{Gpu, LaunchConfig, PinnedHostSlice, Result, Source};
use gpubook::kernel;

// ANCHOR: ping_pong
/// `output = input · scale + shift` per channel, for token rows `scale.len()` wide, streamed
/// through the GPU `chunk_rows` rows at a time: chunk i goes through buffer pair i % 2 on stream
/// i % 2, so one chunk's copies overlap the other chunk's kernel and copies. Automatic
/// synchronisation is off: order the streams with events.
pub fn ping_pong(
    gpu: &Gpu,
    input: &PinnedHostSlice<f32>,
    output: &mut PinnedHostSlice<f32>,
    scale: &[f32],
    shift: &[f32],
    chunk_rows: usize,
) -> Result<()> {
    let hidden = scale.len();
    let module = gpu.load_module(kernel!("ch08/channel_affine.cu"))?;
    let f = module.load_function("channel_affine")?;
    // The layer's parameters go up once, on the default stream, before the pipeline starts.
    let setup = gpu.default_stream();
    let mut scale_d = setup.clone_htod(scale)?;
    scale_d.set_label("scale");
    let mut shift_d = setup.clone_htod(shift)?;
    shift_d.set_label("shift");
    let (n, chunk) = (input.len(), chunk_rows * hidden);
    let hidden_i = hidden as i32;
    todo!(
        "two streams, each waiting for an event recorded after the parameters' upload; two pairs \
           of chunk buffers; chunk i on stream and pair i % 2: upload, kernel, download"
    );
    Ok(())
}
// ANCHOR_END: ping_pong

/// The kernel file of the alternating-buffer protocol (`kernels/ch08/ll_buffers.cu`); the grader
/// plays the ranks with it.
pub fn ll_buffers() -> Source {
    kernel!("ch08/ll_buffers.cu")
}
