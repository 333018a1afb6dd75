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
    // SOLUTION
    let streams = [gpu.new_stream()?, gpu.new_stream()?];
    let params_ready = setup.record_event()?;
    let mut pairs = Vec::new();
    for (b, s) in streams.iter().enumerate() {
        s.wait(&params_ready)?; // the kernels on s read scale and shift
        // SAFETY: each chunk is uploaded into x (and computed into y) before it is read.
        let (mut x, mut y) = unsafe { (s.alloc::<f32>(chunk)?, s.alloc::<f32>(chunk)?) };
        x.set_label(format!("x[{b}]"));
        y.set_label(format!("y[{b}]"));
        pairs.push((x, y));
    }
    for (i, start) in (0..n).step_by(chunk.max(1)).enumerate() {
        let len = chunk.min(n - start);
        // Buffer pair and stream i % 2: on one stream, chunk i+2 reuses the pair only after
        // chunk i's download, by stream order, with no event needed.
        let s = &streams[i % 2];
        let (x, y) = &mut pairs[i % 2];
        s.memcpy_htod(&input.slice(start..start + len), &mut x.slice_mut(..len))?;
        let cfg = LaunchConfig { grid_dim: ((len as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let len_i = len as i32;
        {
            let (xv, mut yv) = (x.slice(..len), y.slice_mut(..len));
            let mut launch = s.launch_builder(&f);
            launch.arg(&xv).arg(&mut yv).arg(&scale_d).arg(&shift_d).arg(&len_i).arg(&hidden_i);
            unsafe { launch.launch(cfg) }?;
        }
        s.memcpy_dtoh(&y.slice(..len), &mut output.slice_mut(start..start + len))?;
    }
    // Later work on the default stream (the caller's) comes after both streams.
    for s in &streams {
        setup.join(s)?;
    }
    // STUB
    // todo!(
    //     "two streams, each waiting for an event recorded after the parameters' upload; two pairs \
    //        of chunk buffers; chunk i on stream and pair i % 2: upload, kernel, download"
    // );
    // END SOLUTION
    Ok(())
}
// ANCHOR_END: ping_pong

/// The kernel file of the alternating-buffer protocol (`kernels/ch08/ll_buffers.cu`); the grader
/// plays the ranks with it.
pub fn ll_buffers() -> Source {
    kernel!("ch08/ll_buffers.cu")
}
