//! Chapter 14: SMs, channels and warp roles.
//!
//! DeepSeek-V3 gives its all-to-all 20 of an H800's 132 SMs: 10 channels of two SMs, each
//! channel a slice of the tokens, with a ring buffer between the SM that sends and the SM that
//! receives, and warps inside each SM specialised into roles.

use gpubook::ep::{ChannelConfig, Incoming, Rings, Symmetric, World};
use gpubook::gpu::{LaunchConfig, Result, Source};
use gpubook::kernel;

/// The kernel file of the channel ring (`kernels/ch14/channel_ring.cu`); the grader runs its
/// channels on the stage of gpubook/channel_ring.cuh.
pub fn channel_ring() -> Source {
    kernel!("ch14/channel_ring.cu")
}

// ANCHOR: roles
/// One node's incoming tokens forwarded to its GPUs through `cfg.channels` channels, with warp
/// roles (`warp_roles.cu`). The kernel runs on `rank`, the forwarding GPU, which holds the
/// rings; `recv_x` and `recv_src` are the receive buffers of the node's GPUs (the world's ranks),
/// reached through their peer tables.
pub fn dispatch_roles(
    world: &World,
    rank: usize,
    cfg: &ChannelConfig,
    input: &Incoming,
    rings: &mut Rings,
    recv_x: &mut Symmetric<f32>,
    recv_src: &mut Symmetric<i32>,
) -> Result<()> {
    let stream = world.rank(rank).stream();
    let f = stream.gpu().load_module(kernel!("ch14/warp_roles.cu"))?.load_function("dispatch_roles")?;
    let gpus = world.size();
    // Every block has a warp for each worker of its busier side, plus the coordinator.
    let warps = cfg.senders.max(gpus) + 1;
    let launch = LaunchConfig { grid_dim: (2 * cfg.channels as u32, 1, 1), block_dim: (32 * warps as u32, 1, 1), shared_mem_bytes: 0 };
    let (t, h, g) = (input.tokens as i32, input.hidden as i32, gpus as i32);
    let (slots, chunk, senders) = (cfg.slots as i32, cfg.chunk as i32, cfg.senders as i32);
    let mut l = stream.launch_builder(&f);
    l.arg(&input.x).arg(&input.place).arg(&mut rings.x).arg(&mut rings.src).arg(&mut rings.counters);
    l.arg(recv_x.peers(rank)).arg(recv_src.peers(rank));
    l.arg(&t).arg(&h).arg(&g).arg(&slots).arg(&chunk).arg(&senders);
    unsafe { l.launch(launch) }
}
// ANCHOR_END: roles
