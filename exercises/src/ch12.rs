//! Chapter 12: MoE routing and the all-to-all.
//!
//! A mixture-of-experts layer sends each token to a few of many experts, which live on
//! different GPUs (ranks). The gate chooses the experts; the layout counts what goes where and
//! gives every token its place; dispatch stores each token into the ranks that hold its experts;
//! after the experts, combine brings their outputs back, weighted, to the token's own rank. The
//! ranks are a `gpubook::ep::World`: on one device they share its memory, so a store through a
//! peer table is a store into another rank's buffer, as over NVLink.

use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, Received, Routing, Symmetric, World};
use gpubook::gpu::{DeviceSlice, Gpu, LaunchConfig, Result};
use gpubook::kernel;

/// Threads per block of the gate: one token each.
pub const GATE_BLOCK: u32 = 128;

// ANCHOR: gate
/// DeepSeek-V3's gate without groups (`g.groups` is 1): for each of `tokens` rows of logits, the
/// `g.topk` experts and their weights, computed by `gate.cu`, one thread per token.
pub fn gate(gpu: &Gpu, logits: &DeviceSlice<f32>, bias: &DeviceSlice<f32>, tokens: usize, g: &GateConfig) -> Result<Routing> {
    let f = gpu.load_module(kernel!("ch12/gate.cu"))?.load_function("moe_gate")?;
    let s = gpu.default_stream();
    // SAFETY: the kernel writes every token's row.
    let mut routing = unsafe { Routing { topk_idx: s.alloc::<i32>(tokens * g.topk)?, topk_weights: s.alloc::<f32>(tokens * g.topk)? } };
    let (t, e, k) = (tokens as i32, g.experts as i32, g.topk as i32);
    let cfg = LaunchConfig { grid_dim: ((tokens as u32).div_ceil(GATE_BLOCK), 1, 1), block_dim: (GATE_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let mut l = s.launch_builder(&f);
    l.arg(logits).arg(bias).arg(&mut routing.topk_idx).arg(&mut routing.topk_weights);
    l.arg(&t).arg(&e).arg(&k).arg(&g.route_scale);
    unsafe { l.launch(cfg) }?;
    Ok(routing)
}
// ANCHOR_END: gate

/// Threads per block of the layout: a tile of tokens at a time.
pub const LAYOUT_BLOCK: u32 = 256;

// ANCHOR: layout
/// One rank's dispatch layout: how many of its tokens go to each rank and each expert, and each
/// token's place among those going to each rank, computed on the device from `topk_idx`
/// (`tokens × topk` global expert numbers; `experts / ranks` experts live on each rank).
pub fn dispatch_layout(gpu: &Gpu, topk_idx: &DeviceSlice<i32>, tokens: usize, topk: usize, experts: usize, ranks: usize) -> Result<Layout> {
    let f = gpu.load_module(kernel!("ch12/dispatch_layout.cu"))?.load_function("get_dispatch_layout")?;
    let s = gpu.default_stream();
    todo!(
        "allocate the three outputs, launch get_dispatch_layout with one block of LAYOUT_BLOCK threads \
           per rank and (experts / ranks + LAYOUT_BLOCK) ints of dynamic shared memory"
    )
}
// ANCHOR_END: layout

// ANCHOR: dispatch
/// Sends every rank's tokens to the ranks that hold their experts. `tokens[r]` and `layouts[r]`
/// are rank r's (on its device); `per_rank_buffer` (`ranks × ranks` ints on every rank) is for the
/// count exchange; `recv` is where tokens arrive. Issue rank r's kernels on
/// `world.rank(r).stream()`, and put a `world.barrier()` wherever one rank's kernel reads what
/// another's wrote.
pub fn dispatch(
    world: &World,
    shape: &MoeShape,
    tokens: &[RankTokens],
    layouts: &[Layout],
    per_rank_buffer: &mut Symmetric<i32>,
    recv: &mut Received,
) -> Result<()> {
    let module = world.rank(0).gpu().load_module(kernel!("ch12/dispatch.cu"))?;
    let (notify, send) = (module.load_function("notify_dispatch")?, module.load_function("dispatch")?);
    let ranks = world.size();
    let (t, h, k, e, r_n) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, shape.experts as i32, ranks as i32);
    todo!(
        "on every rank's stream, notify_dispatch (one block) with per_rank_buffer.peers(r); a \
           world barrier; on every rank's stream, dispatch with one block per token and the peer \
           tables of recv; a world barrier"
    );
    Ok(())
}
// ANCHOR_END: dispatch

// ANCHOR: combine
/// Brings the experts' outputs back: on rank r, `expert_out[r]` holds row `(slot * topk + k)` for
/// each received slot below `num_recv[r]` and each k whose `recv.topk_idx` is a local expert.
/// Each token's output, the sum of its experts' outputs times their weights, goes into
/// `out[rank][t * hidden ..]`; `combine_buf` (`tokens × ranks × hidden` on every rank) is where
/// the rows arrive.
#[allow(clippy::too_many_arguments)]
pub fn combine(
    world: &World,
    shape: &MoeShape,
    layouts: &[Layout],
    recv: &Received,
    num_recv: &[usize],
    expert_out: &[DeviceSlice<f32>],
    combine_buf: &mut Symmetric<f32>,
    out: &mut [DeviceSlice<f32>],
) -> Result<()> {
    let module = world.rank(0).gpu().load_module(kernel!("ch12/combine.cu"))?;
    let (back, reduce) = (module.load_function("combine")?, module.load_function("combine_reduce")?);
    let ranks = world.size();
    let (t, h, k, r_n) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, ranks as i32);
    todo!(
        "on every rank with tokens received, combine with one block per received slot and \
           combine_buf.peers(r); a world barrier; on every rank, combine_reduce with one thread per \
           output float; a world barrier"
    );
    Ok(())
}
// ANCHOR_END: combine
