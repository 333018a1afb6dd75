//! Chapter 13's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.
#![allow(clippy::type_complexity)]

use crate::grade::ch12::wrong::{Issue, cfg, gate_from_reference, gate_with, mutated, solution};
use crate::grade::ch13;
use crate::grade::testing::expect_failure;
use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, RdmaBuffers, Received, Routing, Symmetric, Topology, TrafficCount, World};
use gpubook::gpu::{DeviceSlice, Gpu, Result, Source};
use gpubook_labs::ep::reference;

fn gate13(edits: &[(&str, &str)]) -> impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing> {
    gate_with(mutated("ch13/gate_node_limited.cu", edits), "moe_gate_node_limited")
}

#[test]
fn node_limited_gate_that_ignores_the_limit() {
    let f = gate13(&[("if (!kept[e / per_group]) taken[e] = true;", "if (!kept[e / per_group]) taken[e] = taken[e];")]);
    expect_failure("node_limited_gate_that_ignores_the_limit", &["topk_idx", "node-limited routing", "at most that many nodes"], || {
        ch13::node_limited_gate(f)
    });
}

#[test]
fn node_limited_gate_that_scores_groups_by_their_best() {
    let f = gate13(&[("score[g] = first + second;", "score[g] = first;")]);
    expect_failure("node_limited_gate_that_scores_groups_by_their_best", &["topk_idx", "TWO best"], || ch13::node_limited_gate(f));
}

#[test]
fn node_limited_gate_that_calls_the_reference() {
    expect_failure("node_limited_gate_that_calls_the_reference", &["called gpubook's own"], || {
        ch13::node_limited_gate(gate_from_reference)
    });
}

fn two_hop_with(
    source: Source,
    how: Issue,
) -> impl Fn(&World, &MoeShape, &[RankTokens], &[Layout], &Symmetric<i32>, &mut RdmaBuffers, &mut Received) -> Result<()> {
    move |world, shape, tokens, layouts, per_rank_buffer, rdma, recv| {
        if how == Issue::CallsReference {
            let _ = reference::two_hop_traffic(world.topology(), shape.experts, shape.topk, &[], 1);
        }
        let module = world.rank(0).gpu().load_module(source.clone())?;
        let (hop1, hop2) = (module.load_function("dispatch_rdma")?, module.load_function("dispatch_forward")?);
        let topo = world.topology();
        let (t, h, k, e) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, shape.experts as i32);
        let (n, g) = (topo.nodes() as i32, topo.gpus_per_node() as i32);
        for r in 0..world.size() {
            let rank = r as i32;
            let mut l = world.rank(r).stream().launch_builder(&hop1);
            l.arg(&tokens[r].x).arg(&tokens[r].topk_idx).arg(&tokens[r].topk_weights).arg(&layouts[r].send_pos);
            l.arg(rdma.x.peers(r)).arg(rdma.meta.peers(r)).arg(rdma.topk_weights.peers(r)).arg(rdma.count.peers(r));
            l.arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&rank);
            // SAFETY: each peer's RDMA buffers hold nodes × tokens messages, a region of `tokens` per
            // source node, enough when a token goes once to each node. The once-per-expert and GPU-0
            // mutants overflow a region on purpose: the emulator's check mode stops a store past the
            // buffer; on a GPU that is undefined.
            unsafe { l.launch(cfg((shape.tokens as u32, 1), 128, 0)) }?;
        }
        if how != Issue::NoBarrier {
            world.barrier()?;
        }
        for r in 0..world.size() {
            let rank = r as i32;
            let mut l = world.rank(r).stream().launch_builder(&hop2);
            l.arg(rdma.x.on(r)).arg(rdma.meta.on(r)).arg(rdma.topk_weights.on(r)).arg(rdma.count.on(r)).arg(per_rank_buffer.on(r));
            l.arg(recv.x.peers(r)).arg(recv.topk_idx.peers(r)).arg(recv.topk_weights.peers(r)).arg(recv.src.peers(r));
            l.arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&rank);
            // SAFETY: blocks past a node's count return, so each reads one message of its region, and
            // per_rank_buffer holds the true counts, so offset + pos stays below cap. A mutant's misplaced
            // messages can send a store past it: the emulator stops that (on a GPU, undefined).
            unsafe { l.launch(cfg((shape.tokens as u32, topo.nodes() as u32), 128, 0)) }?;
        }
        world.barrier()
    }
}

#[test]
fn two_hop_that_sends_a_token_once_per_expert() {
    // The loop over nodes becomes a loop over the token's experts: a node holding two of them
    // gets the token twice.
    let src = mutated(
        "ch13/two_hop.cu",
        &[
            (
                "for (int b = 0; b < nodes; ++b) {",
                "for (int kk = 0; kk < topk; ++kk) {\n        int b = topk_idx[t * topk + kk] / per_rank / gpus;",
            ),
            ("bool to_b = false;", "bool to_b = true;"),
            ("for (int k = 0; k < topk; ++k) to_b = to_b ||", "for (int k = 0; k < 0; ++k) to_b = to_b ||"),
        ],
    );
    expect_failure("two_hop_that_sends_a_token_once_per_expert", &["one IB message per (token, node)"], || {
        ch13::two_hop(two_hop_with(src, Issue::Right))
    });
}

#[test]
fn two_hop_that_lands_on_gpu_0() {
    let src = mutated("ch13/two_hop.cu", &[("int f = b * gpus + local;", "int f = b * gpus;")]);
    expect_failure("two_hop_that_lands_on_gpu_0", &["the sender's own index"], || ch13::two_hop(two_hop_with(src, Issue::Right)));
}

#[test]
fn two_hop_without_a_barrier() {
    expect_failure(
        "two_hop_without_a_barrier",
        &["no world barrier between the last `dispatch_rdma` and the first `dispatch_forward`"],
        || ch13::two_hop(two_hop_with(solution("ch13/two_hop.cu"), Issue::NoBarrier)),
    );
}

#[test]
fn two_hop_forward_without_the_offset() {
    let src = mutated("ch13/two_hop.cu", &[("for (int r = 0; r < s; ++r) offset +=", "for (int r = 0; r < 0; ++r) offset +=")]);
    expect_failure("two_hop_forward_without_the_offset", &["every LOWER rank"], || ch13::two_hop(two_hop_with(src, Issue::Right)));
}

#[test]
fn two_hop_that_calls_the_reference() {
    expect_failure("two_hop_that_calls_the_reference", &["called gpubook's own", "two_hop_traffic"], || {
        ch13::two_hop(two_hop_with(solution("ch13/two_hop.cu"), Issue::CallsReference))
    });
}

/// A traffic count with one of the mistakes: (IB per expert, IB for the own node too, NVLink to
/// the landing GPU too).
fn traffic_with(
    per_expert: bool,
    own_node: bool,
    nvlink_to_self: bool,
) -> impl Fn(Topology, usize, usize, &[Vec<i32>], u64) -> TrafficCount {
    move |topo, experts, topk, idx, bytes| {
        let per_rank = experts / topo.ranks();
        let mut c = TrafficCount::default();
        for (s, rows) in idx.iter().enumerate() {
            for row in rows.chunks(topk) {
                let mut ranks: Vec<usize> = row.iter().map(|&e| e as usize / per_rank).collect();
                let mut nodes: Vec<usize> = ranks.iter().map(|&d| topo.node_of(d)).collect();
                if !per_expert {
                    nodes.sort();
                    nodes.dedup();
                }
                ranks.sort();
                ranks.dedup();
                c.ib_messages += nodes.iter().filter(|&&b| own_node || b != topo.node_of(s)).count() as u64;
                c.nvlink_messages += ranks.iter().filter(|&&d| nvlink_to_self || topo.local_of(d) != topo.local_of(s)).count() as u64;
            }
        }
        c.ib_bytes = c.ib_messages * bytes;
        c.nvlink_bytes = c.nvlink_messages * bytes;
        c
    }
}

#[test]
fn traffic_per_expert() {
    expect_failure("traffic_per_expert", &["one message per (token, NODE)"], || ch13::traffic(traffic_with(true, false, false)));
}

#[test]
fn traffic_with_the_own_node_over_ib() {
    expect_failure("traffic_with_the_own_node_over_ib", &["own node costs no IB"], || ch13::traffic(traffic_with(false, true, false)));
}

#[test]
fn traffic_with_nvlink_to_the_landing_gpu() {
    expect_failure("traffic_with_nvlink_to_the_landing_gpu", &["hop 2", "GPU l itself needs none"], || {
        ch13::traffic(traffic_with(false, false, true))
    });
}

#[test]
fn traffic_from_the_reference() {
    expect_failure("traffic_from_the_reference", &["called gpubook's own", "two_hop_traffic"], || {
        ch13::traffic(reference::two_hop_traffic)
    });
}
