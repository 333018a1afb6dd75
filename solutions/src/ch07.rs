//! Chapter 7: streams and events.
//!
//! A stream is a queue: what you put on one runs in order. Two streams run independently, so
//! work on one can overlap work on another, and nothing orders them unless you do: record an
//! event on one stream, make the other wait on it. Here automatic synchronisation is off, so the
//! API does not insert those waits for you; it reports the ones you forgot.

use gpubook::gpu::{Event, Gpu, LaunchConfig, Result};
use gpubook::kernel;

// ANCHOR: three_streams
/// `y = a·x + b` for several rounds of input, each round through three streams: `up` copies x
/// to the device, `work` runs the kernel, `down` copies y back. There is one device buffer for
/// x and one for y, reused every round. Automatic synchronisation is off: place the events.
pub fn three_streams(gpu: &Gpu, rounds: &[Vec<f32>], a: f32, b: f32) -> Result<Vec<Vec<f32>>> {
    let n = rounds.first().map_or(0, Vec::len);
    let module = gpu.load_module(kernel!("ch07/axpb.cu"))?;
    let f = module.load_function("axpb")?;
    let (up, work, down) = (gpu.new_stream()?, gpu.new_stream()?, gpu.new_stream()?);
    // Pinned host memory, so that the copies are asynchronous: the host never waits between rounds.
    let mut host_x = Vec::new();
    let mut host_y = Vec::new();
    for r in rounds {
        // SAFETY: written right away (x) or by the copy back before it is read (y).
        let mut hx = unsafe { gpu.alloc_pinned::<f32>(n) }?;
        hx.as_mut_slice()?.copy_from_slice(r);
        host_x.push(hx);
        host_y.push(unsafe { gpu.alloc_pinned::<f32>(n) }?);
    }
    // SAFETY: every round writes x (the upload) and y (the kernel) before reading them.
    let mut x = unsafe { up.alloc::<f32>(n) }?;
    x.set_label("x");
    let mut y = unsafe { work.alloc::<f32>(n) }?;
    y.set_label("y");
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let n_i = n as i32;
    // Events carried from one round to the next.
    let mut x_read: Option<Event> = None; // this round's kernel has read x
    let mut y_read: Option<Event> = None; // this round's download has read y
    for r in 0..rounds.len() {
        // SOLUTION
        if let Some(e) = &x_read {
            up.wait(e)?; // the upload overwrites x: the last kernel must have read it
        }
        // STUB
        // // TODO: what must finish before this upload may overwrite x?
        // END SOLUTION
        up.memcpy_htod(&host_x[r], &mut x)?;
        // SOLUTION
        work.wait(&up.record_event()?)?; // the kernel reads the x just uploaded
        if let Some(e) = &y_read {
            work.wait(e)?; // the kernel overwrites y: the last download must have read it
        }
        // STUB
        // // TODO: what must finish before the kernel may read x, and before it may overwrite y?
        // END SOLUTION
        let mut launch = work.launch_builder(&f);
        launch.arg(&x).arg(&mut y).arg(&a).arg(&b).arg(&n_i);
        unsafe { launch.launch(cfg) }?;
        // SOLUTION
        let kernel_done = work.record_event()?;
        down.wait(&kernel_done)?; // the download reads the y just computed
        x_read = Some(kernel_done);
        // STUB
        // // TODO: what must finish before the download may read y? Which event will the next
        // // round's upload need?
        // END SOLUTION
        down.memcpy_dtoh(&y, &mut host_y[r])?;
        // SOLUTION
        y_read = Some(down.record_event()?);
        // STUB
        // // TODO: which event will the next round's kernel need?
        // END SOLUTION
    }
    // Reading a pinned buffer waits for the copies into it.
    host_y.iter().map(|h| Ok(h.as_slice()?.to_vec())).collect()
}
// ANCHOR_END: three_streams
