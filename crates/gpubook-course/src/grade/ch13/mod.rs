//! Chapter 13: node-limited routing and the two-hop path. The gate is graded as chapter 12's,
//! with group limits, and with a check of the limit itself (no token reaches more groups than
//! allowed). The two-hop dispatch is graded on what arrives, and on what crossed the first hop:
//! each rank's RDMA buffers must hold exactly one message per (token, node) from each node, sent
//! to the rank with the sender's own index. The traffic count is compared with the host's.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::ch12::{
    alloc_received, barrier_between, check_received, clear_world_traces, count_matrix, grade_gate, grading_world, host_layout, host_slots,
    launched_anywhere, no_host_copies, upload_layouts, upload_tokens, world_traces,
};
use super::explain::Explain;
use super::{Failure, grade};
use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, RdmaBuffers, Received, Routing, Symmetric, Topology, TrafficCount, World};
use gpubook::gpu::{DeviceSlice, Gpu, Result};
use gpubook_labs::ep::reference::GateVariant;

// ---- ch13-node-limited-gate -----------------------------------------------------------------------

/// `gate_node_limited(gpu, logits, bias, tokens, g) -> Routing`.
pub fn node_limited_gate(f: impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing>) -> GradeReport {
    let g = |experts, groups, topk_groups, topk, route_scale| GateConfig { experts, groups, topk_groups, topk, route_scale };
    let cases = [
        (1, g(8, 4, 2, 4, 1.0), "a single token, 4 nodes of 2 experts"),
        (127, g(24, 6, 2, 5, 1.0), "block - 1 tokens, 6 groups keep 2"),
        (129, g(256, 8, 4, 8, 2.5), "DeepSeek-V3: 8 groups keep 4, top-8"),
        (300, g(10, 5, 5, 10, 2.5), "every group kept, every expert chosen"),
        (64, g(12, 6, 1, 2, 1.0), "one group kept"),
        (1000, g(60, 10, 3, 7, 2.5), "large: 10 groups of 6 keep 3"),
    ];
    let variants = [
        GateVariant::GroupsIgnored,
        GateVariant::GroupMax,
        GateVariant::BiasIgnored,
        GateVariant::BiasedWeights,
        GateVariant::Softmax,
        GateVariant::SoftmaxWeights,
        GateVariant::NotNormalised,
        GateVariant::NoRouteScale,
    ];
    grade_gate("ch13-node-limited-gate", &cases, "moe_gate_node_limited", &variants, f)
}

// ---- ch13-two-hop -------------------------------------------------------------------------------

/// (nodes, gpus per node, tokens, hidden, experts, topk, name).
type TwoHopCase = (usize, usize, usize, usize, usize, usize, &'static str);

const TWO_HOP_CASES: [TwoHopCase; 5] = [
    (2, 1, 1, 8, 2, 1, "one token, 2 nodes of 1 GPU"),
    (2, 2, 33, 12, 8, 3, "2 nodes of 2 GPUs"),
    (3, 2, 65, 16, 12, 4, "3 nodes of 2 GPUs"),
    (2, 3, 129, 8, 6, 2, "2 nodes of 3 GPUs, 129 tokens"),
    (4, 3, 200, 16, 24, 6, "large: 4 nodes of 3 GPUs, 200 tokens each, top-6 of 24"),
];

const TWO_HOP_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some(
        "an index past a buffer: each rank's RDMA buffers have one region of `tokens` messages per source node, and a token \
         takes at most one slot in a region: it goes ONCE to each node (one IB message per (token, node)), to the rank with \
         the sender's own index; a message's meta is 1 + topk + gpus_per_node ints; a token's final slot in rank d is \
         (tokens every LOWER rank sends to d) + send_pos",
    ),
    race: Some(
        "two blocks wrote one slot: in dispatch_rdma, claim each message's slot with atomicAdd on the receiver's \
         rdma_count[sender's node], share it through shared memory, __syncthreads before the next claim; in \
         dispatch_forward, a token's final slot in rank d is (tokens every LOWER rank sends to d) + send_pos, its own",
    ),
    divergence: Some(
        "every thread of a block reaches each __syncthreads: decide whether the token goes to node b the same way in every thread",
    ),
    uninitialized: Some(
        "a read of something nobody wrote: the forwarder reads only messages below rdma_count[a], after a world barrier \
         that waits for every sender",
    ),
    launch_config: None,
};

/// `dispatch_two_hop(world, shape, tokens, layouts, per_rank_buffer, rdma, recv)`.
pub fn two_hop(
    f: impl Fn(&World, &MoeShape, &[RankTokens], &[Layout], &Symmetric<i32>, &mut RdmaBuffers, &mut Received) -> Result<()>,
) -> GradeReport {
    grade("ch13-two-hop", |ctx| {
        for (nodes, gpus, tokens, hidden, experts, topk, name) in TWO_HOP_CASES {
            let topo = Topology::new(nodes, gpus).expect("a valid topology");
            let ranks = topo.ranks();
            let input = format!(
                "{topo}, {tokens} token{} each of {hidden} floats, top-{topk} of {experts} experts ({name})",
                if tokens == 1 { "" } else { "s" }
            );
            let shape = MoeShape { tokens, hidden, experts, topk };
            let world = grading_world(ctx, topo).map_err(Failure::from)?;
            let xs: Vec<Vec<f32>> = (0..ranks).map(|_| ctx.rng.vec_f32(tokens * hidden, -1.0, 1.0)).collect();
            let (idx, w): (Vec<Vec<i32>>, Vec<Vec<f32>>) =
                (0..ranks).map(|_| super::ch12::random_routing(&mut ctx.rng, tokens, experts, topk)).unzip();
            let slots = host_slots(&idx, tokens, topk, experts, ranks);
            let cap = slots.iter().map(Vec::len).max().unwrap_or(0).max(1);
            let rank_tokens = upload_tokens(&world, &xs, &idx, &w).map_err(Failure::from)?;
            let layouts = upload_layouts(&world, &idx, &shape).map_err(Failure::from)?;
            let matrix = count_matrix(&idx, &shape, ranks);
            let mut per_rank_buffer = Symmetric::<i32>::zeros(&world, ranks * ranks, "per_rank_buffer").map_err(Failure::from)?;
            for r in 0..ranks {
                world.rank(r).stream().memcpy_htod(&matrix, per_rank_buffer.on_mut(r)).map_err(Failure::from)?;
            }
            let slots_per_rank = nodes * tokens;
            // SAFETY: the messages below each count are written by hop 1; poison shows the rest.
            let mut rdma = unsafe {
                RdmaBuffers {
                    x: Symmetric::alloc(&world, slots_per_rank * hidden, "rdma_x").map_err(Failure::from)?,
                    meta: Symmetric::alloc(&world, slots_per_rank * (1 + topk + gpus), "rdma_meta").map_err(Failure::from)?,
                    topk_weights: Symmetric::alloc(&world, slots_per_rank * topk, "rdma_topk_weights").map_err(Failure::from)?,
                    count: Symmetric::zeros(&world, nodes, "rdma_count").map_err(Failure::from)?,
                }
            };
            let mut recv = alloc_received(&world, cap, &shape).map_err(Failure::from)?;
            world.synchronize().map_err(Failure::from)?;
            clear_world_traces(&world).map_err(Failure::from)?;
            ctx.call_explained(&input, &TWO_HOP_EXPLAIN, || {
                f(&world, &shape, &rank_tokens, &layouts, &per_rank_buffer, &mut rdma, &mut recv)
            })?;
            world.synchronize().map_err(Failure::from)?;
            let traces = world_traces(&world).map_err(Failure::from)?;
            for trace in &traces {
                no_host_copies(trace, "the dispatch", &input)?;
            }
            launched_anywhere(&traces, "dispatch_rdma", &input)?;
            launched_anywhere(&traces, "dispatch_forward", &input)?;
            barrier_between(&world, &traces, "dispatch_rdma", "dispatch_forward", &input)?;
            check_first_hop(&world, &rdma, topo, &idx, &shape, &input)?;
            check_received(&world, &recv, &slots, &shape, &xs, &idx, &w, &input)?;
        }
        Ok(())
    })
}

/// What each rank's RDMA buffers must hold: from each node a, one message per token of rank
/// (a, l) with an expert on this rank's node, no more and no less, with its index and its places.
fn check_first_hop(
    world: &World,
    rdma: &RdmaBuffers,
    topo: Topology,
    idx: &[Vec<i32>],
    shape: &MoeShape,
    input: &str,
) -> Result<(), Failure> {
    let (nodes, gpus, ranks) = (topo.nodes(), topo.gpus_per_node(), topo.ranks());
    let (tokens, topk) = (shape.tokens, shape.topk);
    let per_rank = shape.experts / ranks;
    let counts = rdma.count.to_host(world).map_err(Failure::from)?;
    let metas = rdma.meta.to_host(world).map_err(Failure::from)?;
    let m_len = 1 + topk + gpus;
    // The messages each (receiver f, source node a) should hold: the tokens of rank (a, l) with
    // an expert on f's node.
    let want_of = |f: usize, a: usize| -> Vec<usize> {
        let s = topo.rank(a, topo.local_of(f));
        (0..tokens)
            .filter(|&t| idx[s][t * topk..(t + 1) * topk].iter().any(|&e| topo.node_of(e as usize / per_rank) == topo.node_of(f)))
            .collect()
    };
    let route = |f: usize, a: usize| {
        let l = topo.local_of(f);
        format!("from rank {} (GPU {l} of node {a}) to rank {f} (GPU {l} of node {})", topo.rank(a, l), topo.node_of(f))
    };
    let pairs: Vec<(usize, usize)> = (0..ranks).flat_map(|f| (0..nodes).map(move |a| (f, a))).collect();
    // Nothing where something should be: the first hop went elsewhere.
    if let Some(&(f, a)) = pairs.iter().find(|&&(f, a)| counts[f][a] <= 0 && !want_of(f, a).is_empty()) {
        return Err(Failure::new(format!(
            "rank {f}'s RDMA buffer holds {} messages from node {a}; {} tokens should have come {}",
            counts[f][a],
            want_of(f, a).len(),
            route(f, a)
        ))
        .concept(
            "the first hop goes to the rank of the target node with the sender's own index (GPU l of node b), for every node \
             the token reaches, its own node included (there it is a copy into the sender's own buffer)",
        )
        .input(input));
    }
    for &(f, a) in &pairs {
        let want = want_of(f, a);
        let got = counts[f][a];
        if got as usize != want.len() {
            let fl = Failure::new(format!(
                "rank {f}'s RDMA buffer holds {got} messages from node {a}; {} tokens have an expert on its node",
                want.len()
            ));
            let concept = if got as usize > want.len() {
                "one IB message per (token, node): a token with several experts on one node crosses to it ONCE, and the \
                 second hop fans it out over NVLink. Sending it once per expert multiplies the slowest link's traffic"
            } else {
                "every token crosses to every node that holds one of its experts, once"
            };
            return Err(fl.concept(concept).detail(route(f, a)).input(input));
        }
    }
    for &(f, a) in &pairs {
        let want = want_of(f, a);
        let (b, l) = (topo.node_of(f), topo.local_of(f));
        let s = topo.rank(a, l);
        let route = route(f, a);
        let mut seen: Vec<usize> =
            (0..want.len()).map(|i| metas[f][(a * tokens + i) * m_len]).filter(|&t| t >= 0).map(|t| t as usize).collect();
        seen.sort();
        if seen != want {
            return Err(Failure::new(format!("the messages {route} name tokens {:?}; expected {:?}", first(&seen), first(&want)))
                    .concept("a message's meta starts with the token's index t, then its topk_idx, then its send_pos for each GPU of the target node")
                    .input(input));
        }
        for i in 0..want.len() {
            let m = &metas[f][(a * tokens + i) * m_len..(a * tokens + i + 1) * m_len];
            let t = m[0] as usize;
            let (_, _, pos) = host_layout(&idx[s], tokens, topk, shape.experts, ranks);
            let want_meta: Vec<i32> = std::iter::once(t as i32)
                .chain(idx[s][t * topk..(t + 1) * topk].iter().copied())
                .chain((0..gpus).map(|g| pos[t * ranks + b * gpus + g]))
                .collect();
            if m != want_meta.as_slice() {
                return Err(Failure::new(format!("the message of token {t} {route} has meta {m:?}, expected {want_meta:?}"))
                        .concept("meta = [t, topk_idx[t][0..topk], send_pos[t][rank (b, g)] for g = 0..gpus_per_node]: what the forwarder needs to place the token")
                        .input(input));
            }
        }
    }
    Ok(())
}

fn first(v: &[usize]) -> Vec<usize> {
    v.iter().copied().take(8).collect()
}

// ---- ch13-traffic -------------------------------------------------------------------------------

/// `two_hop_traffic(topo, experts, topk, topk_idx, message_bytes) -> TrafficCount`.
pub fn traffic(f: impl Fn(Topology, usize, usize, &[Vec<i32>], u64) -> TrafficCount) -> GradeReport {
    grade("ch13-traffic", |ctx| {
        let cases = [
            (1, 4, 3, 8, 2, "one node: no IB at all"),
            (2, 2, 1, 4, 3, "one token, 2 nodes of 2 GPUs"),
            (4, 2, 50, 16, 4, "4 nodes of 2 GPUs"),
            (3, 3, 77, 27, 5, "3 nodes of 3 GPUs"),
            (8, 8, 40, 256, 8, "DeepSeek-V3: 8 nodes of 8 GPUs, top-8 of 256"),
        ];
        for (nodes, gpus, tokens, experts, topk, name) in cases {
            let topo = Topology::new(nodes, gpus).expect("a valid topology");
            let bytes = 7168 * 2 + 64;
            for limited in [false, true] {
                let idx: Vec<Vec<i32>> = (0..topo.ranks())
                    .map(|_| {
                        if limited && nodes > 1 {
                            let g = GateConfig {
                                experts,
                                groups: nodes,
                                topk_groups: nodes.div_ceil(2),
                                topk: topk.min(nodes.div_ceil(2) * (experts / nodes)),
                                route_scale: 1.0,
                            };
                            let (logits, bias) = super::ch12::clear_cut_inputs(&mut ctx.rng, tokens, &g);
                            let (i, _) = gpubook_labs::ep::reference::gate_as(&logits, &bias, &g, GateVariant::Right);
                            i
                        } else {
                            super::ch12::random_routing(&mut ctx.rng, tokens, experts, topk).0
                        }
                    })
                    .collect();
                let k = idx[0].len() / tokens;
                let input = format!(
                    "{topo}, {tokens} token{} per rank, top-{k} of {experts} experts{}, {bytes}-byte messages ({name})",
                    if tokens == 1 { "" } else { "s" },
                    if limited && nodes > 1 { format!(", at most {} nodes per token", nodes.div_ceil(2)) } else { String::new() }
                );
                let got = ctx.call(|| Ok(f(topo, experts, k, &idx, bytes)))?;
                let want = gpubook_labs::ep::reference::two_hop_traffic(topo, experts, k, &idx, bytes);
                if got == want {
                    continue;
                }
                let per_expert_ib: u64 = count_ib_per_expert(topo, experts, k, &idx);
                let with_own_node = count_ib_with_own_node(topo, experts, k, &idx);
                let f = Failure::new(format!("got {got:?}")).detail(format!("expected {want:?}")).input(input);
                let concept = if got.ib_messages == per_expert_ib && per_expert_ib != want.ib_messages {
                    "IB carries one message per (token, NODE): count the distinct nodes of a token's experts, not its experts"
                } else if got.ib_messages == with_own_node && with_own_node != want.ib_messages {
                    "a token's own node costs no IB: its first hop is a copy into the sender's own memory"
                } else if got.ib_messages != want.ib_messages {
                    "hop 1: one IB message for every node other than the sender's that holds one of the token's experts"
                } else if got.nvlink_messages != want.nvlink_messages {
                    "hop 2: from GPU l of each node reached, one NVLink message to every OTHER GPU there holding one of the \
                     token's experts (once per rank, however many experts it holds; GPU l itself needs none)"
                } else {
                    "bytes are messages times message_bytes, for each link"
                };
                return Err(f.concept(concept));
            }
        }
        Ok(())
    })
}

fn count_ib_per_expert(topo: Topology, experts: usize, topk: usize, idx: &[Vec<i32>]) -> u64 {
    let per_rank = experts / topo.ranks();
    idx.iter()
        .enumerate()
        .map(|(s, rows)| {
            rows.chunks(topk)
                .map(|row| row.iter().filter(|&&e| topo.node_of(e as usize / per_rank) != topo.node_of(s)).count() as u64)
                .sum::<u64>()
        })
        .sum()
}

fn count_ib_with_own_node(topo: Topology, experts: usize, topk: usize, idx: &[Vec<i32>]) -> u64 {
    let per_rank = experts / topo.ranks();
    idx.iter()
        .map(|rows| {
            rows.chunks(topk)
                .map(|row| {
                    let mut n: Vec<usize> = row.iter().map(|&e| topo.node_of(e as usize / per_rank)).collect();
                    n.sort();
                    n.dedup();
                    n.len() as u64
                })
                .sum::<u64>()
        })
        .sum()
}
