//! Chapter 9: zero copy.
//!
//! A copy you do not make costs nothing. A view lets a kernel write straight into the memory
//! where its result is needed next (a message buffer, a tensor someone else allocated), and
//! mapped host memory lets the host read a kernel's result with no copy at all.

use gpubook::ep::CombineInput;
use gpubook::gpu::{DeviceSlice, Gpu, LaunchConfig, MappedHostSlice, Result, Stream};
use gpubook::kernel;

/// Bytes of each message's header in the send buffer (`combine.cu` says what is in it).
pub const HEADER_BYTES: usize = 16;

/// What both combine paths set up: the inputs on the device and the send buffer with its
/// headers written.
struct Combine {
    stream: std::sync::Arc<Stream>,
    module: gpubook::gpu::Module,
    x: DeviceSlice<f32>,
    expert_of: DeviceSlice<i32>,
    scale: DeviceSlice<f32>,
    bias: DeviceSlice<f32>,
    send: DeviceSlice<u8>,
    rows: usize,
    hidden: usize,
    /// 4-byte words per message: the header's 4, then `hidden` floats.
    msg_words: usize,
}

impl Combine {
    fn new(gpu: &Gpu, p: &CombineInput) -> Result<Combine> {
        let stream = gpu.default_stream();
        let module = gpu.load_module(kernel!("ch09/combine.cu"))?;
        let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
        let msg_words = HEADER_BYTES / 4 + hidden;
        let x = stream.clone_htod(&p.x)?;
        let expert_of = stream.clone_htod(&p.expert_of)?;
        let weight = stream.clone_htod(&p.weight)?;
        let scale = stream.clone_htod(&p.scale)?;
        let bias = stream.clone_htod(&p.bias)?;
        // SAFETY: write_headers writes every header, and an expert row every payload, before combine reads them.
        let mut send = unsafe { stream.alloc::<u8>(rows * msg_words * 4) }?;
        send.set_label("send buffer");
        {
            let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
            let cfg = LaunchConfig { grid_dim: ((rows as u32).div_ceil(128), 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
            let (mw, r, k) = (msg_words as i32, rows as i32, p.top_k as i32);
            let f = module.load_function("write_headers")?;
            let mut launch = stream.launch_builder(&f);
            launch.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
            unsafe { launch.launch(cfg) }?;
        }
        Ok(Combine { stream, module, x, expert_of, scale, bias, send, rows, hidden, msg_words })
    }

    /// A grid over (channels, rows).
    fn grid(&self, rows: usize) -> LaunchConfig {
        LaunchConfig { grid_dim: ((self.hidden as u32).div_ceil(64), rows as u32, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 }
    }

    /// Sums each token's messages from the send buffer into the output.
    fn finish(self, p: &CombineInput) -> Result<Vec<f32>> {
        // SAFETY: the kernel writes every element.
        let mut out = unsafe { self.stream.alloc::<f32>(p.tokens * self.hidden) }?;
        let f = self.module.load_function("combine")?;
        let (mw, t, k, h) = (self.msg_words as i32, p.tokens as i32, p.top_k as i32, self.hidden as i32);
        // The combine reads the messages as 4-byte words: the same bytes, another type.
        let words = self.send.view_as::<i32>(0, self.rows * self.msg_words)?;
        let mut launch = self.stream.launch_builder(&f);
        launch.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
        unsafe { launch.launch(self.grid(p.tokens)) }?;
        self.stream.clone_dtoh(&out)
    }
}

// ANCHOR: with_copy
/// The combine as first written: the experts write their output rows into a tensor of their
/// own, and each row is then copied into its message's payload slot in the send buffer.
pub fn combine_with_copy(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let mut c = Combine::new(gpu, p)?;
    let (rows, hidden) = (c.rows, c.hidden);
    // SAFETY: the expert kernel writes every element.
    let mut y = unsafe { c.stream.alloc::<f32>(rows * hidden) }?;
    y.set_label("expert output");
    let f = c.module.load_function("expert_forward")?;
    let (ld, r, h) = (hidden as i32, rows as i32, hidden as i32);
    let mut launch = c.stream.launch_builder(&f);
    launch.arg(&c.x).arg(&c.expert_of).arg(&c.scale).arg(&c.bias).arg(&mut y).arg(&ld).arg(&r).arg(&h);
    unsafe { launch.launch(c.grid(rows)) }?;
    // The staging copy: one row at a time into the payload slots, past each header.
    {
        let mut payload = c.send.view_2d_mut::<f32>(HEADER_BYTES, rows, hidden, c.msg_words)?;
        for m in 0..rows {
            c.stream.memcpy_dtod(&y.slice(m * hidden..(m + 1) * hidden), &mut payload.row_mut(m))?;
        }
    }
    c.finish(p)
}
// ANCHOR_END: with_copy

// ANCHOR: zero_copy
/// The same combine with no staging copy: the expert kernel writes each row straight into its
/// message's payload slot, through a strided view of the send buffer.
pub fn combine_zero_copy(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let mut c = Combine::new(gpu, p)?;
    let (rows, hidden) = (c.rows, c.hidden);
    let f = c.module.load_function("expert_forward")?;
    let (r, h, cfg) = (rows as i32, hidden as i32, c.grid(rows));
    // SOLUTION
    {
        // Row m of the experts' output is message m's payload: HEADER_BYTES into the buffer, then
        // one message (msg_words words) further per row.
        let mut payload = c.send.view_2d_mut::<f32>(HEADER_BYTES, rows, hidden, c.msg_words)?;
        let ld = payload.row_stride() as i32;
        let mut launch = c.stream.launch_builder(&f);
        launch.arg(&c.x).arg(&c.expert_of).arg(&c.scale).arg(&c.bias).arg(&mut payload).arg(&ld).arg(&r).arg(&h);
        unsafe { launch.launch(cfg) }?;
    }
    // STUB
    // todo!(
    //     "make a strided view of c.send's payload slots (view_2d_mut: HEADER_BYTES in, rows × hidden, \
    //        one message of c.msg_words words per row) and launch expert_forward into it, with its row stride as ld"
    // );
    // END SOLUTION
    c.finish(p)
}
// ANCHOR_END: zero_copy

// ANCHOR: expert_counts
/// How many of `expert_ids` go to each of `experts` experts, counted on the GPU straight into
/// mapped host memory, which the host then reads with no copy (as an MoE dispatch must, to know
/// how much to receive before it allocates).
pub fn expert_counts(gpu: &Gpu, expert_ids: &[i32], experts: usize) -> Result<MappedHostSlice<u32>> {
    let module = gpu.load_module(kernel!("ch09/count_experts.cu"))?;
    let f = module.load_function("count_experts")?;
    let stream = gpu.default_stream();
    let ids = stream.clone_htod(expert_ids)?;
    let n = expert_ids.len() as i32;
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    // SOLUTION
    let mut counts = gpu.alloc_mapped::<u32>(experts)?;
    counts.set_label("counts");
    let mut launch = stream.launch_builder(&f);
    launch.arg(&ids).arg(&n).arg(&mut counts);
    unsafe { launch.launch(cfg) }?;
    // The host reads the counts next: the kernel must be done first.
    stream.synchronize()?;
    Ok(counts)
    // STUB
    // todo!(
    //     "allocate `experts` zeroed counters in mapped host memory (gpu.alloc_mapped), launch count_experts \
    //        into them, and make sure the kernel is done before the host reads them"
    // )
    // END SOLUTION
}
// ANCHOR_END: expert_counts
