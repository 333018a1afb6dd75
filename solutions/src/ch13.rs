//! Chapter 13: node-limited routing and the two-hop path.
//!
//! Across nodes, InfiniBand is about 3.2 times slower than NVLink inside one (50 against
//! 160 GB/s). DeepSeek-V3 limits each token to the experts of at most M nodes (M = 4 of 8), and
//! DeepEP sends a token over InfiniBand once per node, to the GPU with the sender's own index,
//! which forwards it over NVLink to the GPUs that hold its experts.

use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, RdmaBuffers, Received, Routing, Symmetric, Topology, TrafficCount, World};
use gpubook::gpu::{DeviceSlice, Gpu, LaunchConfig, Result};
use gpubook::kernel;

/// Threads per block of the gate: one token each.
pub const GATE_BLOCK: u32 = 128;

// ANCHOR: gate
/// DeepSeek-V3's gate with its group limit: `g.groups` groups of experts, each token limited to
/// the experts of `g.topk_groups` of them. `gate_node_limited.cu`, one thread per token.
pub fn gate_node_limited(gpu: &Gpu, logits: &DeviceSlice<f32>, bias: &DeviceSlice<f32>, tokens: usize, g: &GateConfig) -> Result<Routing> {
    let f = gpu.load_module(kernel!("ch13/gate_node_limited.cu"))?.load_function("moe_gate_node_limited")?;
    let s = gpu.default_stream();
    // SAFETY: the kernel writes every token's row.
    let mut routing = unsafe { Routing { topk_idx: s.alloc::<i32>(tokens * g.topk)?, topk_weights: s.alloc::<f32>(tokens * g.topk)? } };
    let (t, e, gr, tg, k) = (tokens as i32, g.experts as i32, g.groups as i32, g.topk_groups as i32, g.topk as i32);
    let cfg = LaunchConfig { grid_dim: ((tokens as u32).div_ceil(GATE_BLOCK), 1, 1), block_dim: (GATE_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let mut l = s.launch_builder(&f);
    l.arg(logits).arg(bias).arg(&mut routing.topk_idx).arg(&mut routing.topk_weights);
    l.arg(&t).arg(&e).arg(&gr).arg(&tg).arg(&k).arg(&g.route_scale);
    unsafe { l.launch(cfg) }?;
    Ok(routing)
}
// ANCHOR_END: gate

// ANCHOR: two_hop
/// Dispatch across nodes in two hops (see `two_hop.cu`): rank r's tokens, layout (its `send_pos`)
/// and the whole count matrix `per_rank_buffer` (already exchanged) are given; `rdma` holds the
/// RDMA buffers, their counts zeroed; `recv` is where tokens arrive, as in chapter 12.
pub fn dispatch_two_hop(
    world: &World,
    shape: &MoeShape,
    tokens: &[RankTokens],
    layouts: &[Layout],
    per_rank_buffer: &Symmetric<i32>,
    rdma: &mut RdmaBuffers,
    recv: &mut Received,
) -> Result<()> {
    let module = world.rank(0).gpu().load_module(kernel!("ch13/two_hop.cu"))?;
    let (hop1, hop2) = (module.load_function("dispatch_rdma")?, module.load_function("dispatch_forward")?);
    let topo = world.topology();
    let (t, h, k, e) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, shape.experts as i32);
    let (n, g) = (topo.nodes() as i32, topo.gpus_per_node() as i32);
    // SOLUTION
    for r in 0..world.size() {
        let rank = r as i32;
        let cfg = LaunchConfig { grid_dim: (shape.tokens as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        let mut l = world.rank(r).stream().launch_builder(&hop1);
        l.arg(&tokens[r].x).arg(&tokens[r].topk_idx).arg(&tokens[r].topk_weights).arg(&layouts[r].send_pos);
        l.arg(rdma.x.peers(r)).arg(rdma.meta.peers(r)).arg(rdma.topk_weights.peers(r)).arg(rdma.count.peers(r));
        l.arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&rank);
        unsafe { l.launch(cfg) }?;
    }
    // The forwarders read what every sender wrote.
    world.barrier()?;
    for r in 0..world.size() {
        let rank = r as i32;
        let cfg = LaunchConfig { grid_dim: (shape.tokens as u32, topo.nodes() as u32, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        let mut l = world.rank(r).stream().launch_builder(&hop2);
        l.arg(rdma.x.on(r)).arg(rdma.meta.on(r)).arg(rdma.topk_weights.on(r)).arg(rdma.count.on(r)).arg(per_rank_buffer.on(r));
        l.arg(recv.x.peers(r)).arg(recv.topk_idx.peers(r)).arg(recv.topk_weights.peers(r)).arg(recv.src.peers(r));
        l.arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&rank);
        unsafe { l.launch(cfg) }?;
    }
    world.barrier()?;
    // STUB
    // todo!(
    //     "on every rank's stream, dispatch_rdma with one block per token and the peer tables of \
    //        rdma; a world barrier; on every rank, dispatch_forward with a (tokens, nodes) grid, its \
    //        own rdma buffers and the peer tables of recv; a world barrier"
    // );
    // END SOLUTION
    Ok(())
}
// ANCHOR_END: two_hop

// ANCHOR: traffic
/// The traffic of the two-hop dispatch for the tokens routed by `topk_idx` (one vector of
/// `tokens × topk` global expert numbers per rank), each message `message_bytes` long: messages
/// and bytes over InfiniBand (hop 1, between nodes) and over NVLink (hop 2, inside a node). A
/// copy a GPU makes into its own memory crosses no link.
pub fn two_hop_traffic(topo: Topology, experts: usize, topk: usize, topk_idx: &[Vec<i32>], message_bytes: u64) -> TrafficCount {
    let per_rank = experts / topo.ranks();
    let mut c = TrafficCount::default();
    // SOLUTION
    for (s, rows) in topk_idx.iter().enumerate() {
        for row in rows.chunks(topk) {
            // The ranks this token goes to, each once, and their nodes.
            let mut ranks: Vec<usize> = row.iter().map(|&e| e as usize / per_rank).collect();
            ranks.sort();
            ranks.dedup();
            let mut nodes: Vec<usize> = ranks.iter().map(|&d| topo.node_of(d)).collect();
            nodes.dedup(); // sorted with the ranks
            // Hop 1: one IB message per other node reached.
            c.ib_messages += nodes.iter().filter(|&&b| b != topo.node_of(s)).count() as u64;
            // Hop 2: from GPU local_of(s) of each node reached to every other GPU there.
            c.nvlink_messages += ranks.iter().filter(|&&d| topo.local_of(d) != topo.local_of(s)).count() as u64;
        }
    }
    c.ib_bytes = c.ib_messages * message_bytes;
    c.nvlink_bytes = c.nvlink_messages * message_bytes;
    // STUB
    // todo!(
    //     "for each token of each rank s: the ranks it goes to (once each) and their nodes. IB: one \
    //        message per node other than s's own. NVLink: one per rank whose index in its node differs \
    //        from s's. Bytes are messages times message_bytes"
    // );
    // END SOLUTION
    c
}
// ANCHOR_END: traffic
