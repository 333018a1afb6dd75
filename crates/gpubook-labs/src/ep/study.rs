//! Routing studied on the host, for the book and the notebooks: the V3 gate on random logits
//! (through the host reference), and what its node limit does to the traffic of the two hops.

use super::reference::{self, HostRouting};
use crate::rng::Rng;
use gpubook::ep::GateConfig;
use gpubook::ep::LinkModel;
use gpubook::ep::{ShapeError, Topology};

/// `tokens` tokens per rank routed by V3's gate (one group per node, at most `limit` nodes a
/// token), logits uniform in ±4 and a bias in ±0.1 drawn from `seed`.
pub fn sample_routing(
    topo: Topology,
    experts: usize,
    topk: usize,
    limit: usize,
    tokens: usize,
    seed: u64,
) -> Result<Vec<HostRouting>, ShapeError> {
    let groups = topo.nodes();
    let g = GateConfig { experts, groups, topk_groups: limit.min(groups), topk, route_scale: 2.5 };
    let mut rng = Rng::new(seed);
    let bias = rng.vec_f32(experts, -0.1, 0.1);
    (0..topo.ranks()).map(|_| reference::gate(&rng.vec_f32(tokens * experts, -4.0, 4.0), &bias, &g)).collect()
}

/// One row of [`limit_table`]: what a token costs on average with a node limit.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRow {
    /// None: no limit.
    pub limit: Option<usize>,
    pub nodes_per_token: f64,
    /// GPUs holding one of its experts on a node it reaches (the NVLink fan-out, plus the landing GPU when it holds one).
    pub gpus_per_node: f64,
    pub ib_bytes_per_token: f64,
    pub nvlink_bytes_per_token: f64,
    /// IB bytes per token if every (token, remote rank) pair went straight over IB.
    pub direct_ib_bytes_per_token: f64,
}

/// The two-hop traffic per token for every node limit from 1 to all nodes, with V3's gate on
/// `tokens` random tokens per rank; messages of `message_bytes`.
pub fn limit_rows(
    topo: Topology,
    experts: usize,
    topk: usize,
    tokens: usize,
    message_bytes: u64,
    seed: u64,
) -> Result<Vec<LimitRow>, ShapeError> {
    let mut rows = Vec::new();
    for limit in 1..=topo.nodes() {
        let g = GateConfig { experts, groups: topo.nodes(), topk_groups: limit, topk, route_scale: 2.5 };
        if g.check().is_err() {
            continue; // topk more than `limit` nodes' experts
        }
        let routing = sample_routing(topo, experts, topk, limit, tokens, seed)?;
        let idx: Vec<Vec<i32>> = routing.iter().map(|r| r.topk_idx.clone()).collect();
        let n = (topo.ranks() * tokens) as f64;
        let two = reference::two_hop_traffic(topo, experts, topk, &idx, message_bytes);
        let direct = reference::direct_traffic(topo, experts, topk, &idx, message_bytes);
        let per_rank = experts / topo.ranks();
        let (mut nodes, mut gpus) = (0usize, 0usize);
        for r in &routing {
            for t in 0..tokens {
                let mut ranks: Vec<usize> = r.experts_of(t).iter().map(|&e| e as usize / per_rank).collect();
                ranks.sort();
                ranks.dedup();
                let mut ns: Vec<usize> = ranks.iter().map(|&d| topo.node_of(d)).collect();
                ns.dedup();
                nodes += ns.len();
                gpus += ranks.len();
            }
        }
        rows.push(LimitRow {
            limit: (limit < topo.nodes()).then_some(limit),
            nodes_per_token: nodes as f64 / n,
            gpus_per_node: gpus as f64 / nodes.max(1) as f64,
            ib_bytes_per_token: two.ib_bytes as f64 / n,
            nvlink_bytes_per_token: two.nvlink_bytes as f64 / n,
            direct_ib_bytes_per_token: direct.ib_bytes as f64 / n,
        });
    }
    Ok(rows)
}

/// [`limit_rows`] as a Markdown table: per token, the nodes and GPUs reached, the bytes on each
/// link, the ratio of the two links' modelled times (above 1: NVLink is the slower), and the IB
/// bytes a dispatch without forwarding would send.
pub fn limit_table(rows: &[LimitRow], links: &LinkModel) -> String {
    let mut t = String::from(
        "| at most M nodes | nodes | GPUs / node | IB KB | NVLink KB | NVLink ÷ IB time | IB KB, no forwarding |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let limit = r.limit.map(|m| m.to_string()).unwrap_or_else(|| "no limit".into());
        let ratio = (r.nvlink_bytes_per_token / links.nvlink_gb_s) / (r.ib_bytes_per_token / links.ib_gb_s).max(f64::MIN_POSITIVE);
        t += &format!(
            "| {limit} | {:.2} | {:.2} | {:.1} | {:.1} | {:.2} | {:.1} |\n",
            r.nodes_per_token,
            r.gpus_per_node,
            r.ib_bytes_per_token / 1e3,
            r.nvlink_bytes_per_token / 1e3,
            ratio,
            r.direct_ib_bytes_per_token / 1e3
        );
    }
    t
}
