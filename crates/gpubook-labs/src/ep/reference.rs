//! Host references: the gate, the experts and a dense MoE layer, and the traffic of the two
//! routes a token can take. `gpubook moe route` and `gpubook moe run` use them to check the GPU,
//! and the graders compare against them; every function starts with
//! [`reference::called`](gpubook::reference::called), so a grader refuses an answer that calls one.

use gpubook::ep::{GateConfig, ShapeError, Topology, TrafficCount};
use gpubook::reference::called;
use serde::Serialize;

/// Which experts each token goes to, and with what weights: `tokens × topk`, row-major, each
/// row in descending order of biased score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostRouting {
    pub topk: usize,
    pub topk_idx: Vec<i32>,
    pub topk_weights: Vec<f32>,
}

impl HostRouting {
    pub fn tokens(&self) -> usize {
        self.topk_idx.len() / self.topk.max(1)
    }
    pub fn experts_of(&self, t: usize) -> &[i32] {
        &self.topk_idx[t * self.topk..(t + 1) * self.topk]
    }
    pub fn weights_of(&self, t: usize) -> &[f32] {
        &self.topk_weights[t * self.topk..(t + 1) * self.topk]
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// DeepSeek-V3's gate on the host, in f64 (see `solutions/kernels/ch13/gate_node_limited.cu`,
/// the kernel `gpubook moe` runs, for the steps). `logits` is `tokens × experts`; ties go to the
/// lower index, for groups and experts alike.
pub fn gate(logits: &[f32], bias: &[f32], cfg: &GateConfig) -> Result<HostRouting, ShapeError> {
    called("gpubook_labs::ep::reference::gate");
    cfg.check()?;
    let e = cfg.experts;
    if bias.len() != e {
        return Err(ShapeError(format!("the bias has {} values, one per expert is {e}", bias.len())));
    }
    if !logits.len().is_multiple_of(e) {
        return Err(ShapeError(format!("{} logits is not a whole number of rows of {e}", logits.len())));
    }
    let (topk_idx, weights) = gate_variant(logits, bias, cfg, GateVariant::Right);
    Ok(HostRouting { topk: cfg.topk, topk_idx, topk_weights: weights.into_iter().map(|w| w as f32).collect() })
}

/// How a gate may differ from V3's: each one a mistake a grader names by computing it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateVariant {
    Right,
    /// Chooses by the affinities alone: the bias ignored.
    BiasIgnored,
    /// Weighs with the biased scores.
    BiasedWeights,
    /// Weights not divided by their sum.
    NotNormalised,
    /// Weights not multiplied by route_scale.
    NoRouteScale,
    /// softmax over the experts instead of sigmoid.
    Softmax,
    /// Chooses right, but weighs with exp(logit) (a softmax over the chosen experts).
    SoftmaxWeights,
    /// No group limit (chapter 13).
    GroupsIgnored,
    /// A group scored by its best expert only (chapter 13).
    GroupMax,
}

/// The gate with `v`'s mistake (or none, [`GateVariant::Right`]): per token, its `topk` experts
/// and their weights in f64, row after row. The one host model of the gate: [`gate`] is its
/// `Right` case, and graders compute the mistakes with it. Shapes are the caller's to check.
pub fn gate_as(logits: &[f32], bias: &[f32], cfg: &GateConfig, v: GateVariant) -> (Vec<i32>, Vec<f64>) {
    called("gpubook_labs::ep::reference::gate_as");
    gate_variant(logits, bias, cfg, v)
}

fn gate_variant(logits: &[f32], bias: &[f32], g: &GateConfig, v: GateVariant) -> (Vec<i32>, Vec<f64>) {
    let e_n = g.experts;
    let (mut idx, mut w) = (Vec::with_capacity(logits.len() / e_n.max(1) * g.topk), Vec::new());
    for row in logits.chunks(e_n) {
        let aff: Vec<f64> = if v == GateVariant::Softmax {
            let m = row.iter().fold(f32::MIN, |a, &b| a.max(b)) as f64;
            let ex: Vec<f64> = row.iter().map(|&z| (z as f64 - m).exp()).collect();
            let s: f64 = ex.iter().sum();
            ex.iter().map(|x| x / s).collect()
        } else {
            row.iter().map(|&z| sigmoid(z as f64)).collect()
        };
        let biased: Vec<f64> =
            if v == GateVariant::BiasIgnored { aff.clone() } else { aff.iter().zip(bias).map(|(a, &b)| a + b as f64).collect() };
        let mut allowed = vec![true; e_n];
        if g.groups > 1 && v != GateVariant::GroupsIgnored {
            let per = g.experts_per_group();
            let score: Vec<f64> = biased
                .chunks(per)
                .map(|c| {
                    let mut s = c.to_vec();
                    s.sort_by(|a, b| b.total_cmp(a));
                    if v == GateVariant::GroupMax { s[0] } else { s[0] + s[1] }
                })
                .collect();
            let kept = top_indices(&score, g.topk_groups, &vec![true; g.groups]);
            for (e, a) in allowed.iter_mut().enumerate() {
                *a = kept.contains(&(e / per));
            }
        }
        let chosen = top_indices(&biased, g.topk, &allowed);
        let ws: Vec<f64> = chosen
            .iter()
            .map(|&e| match v {
                GateVariant::BiasedWeights => biased[e],
                GateVariant::SoftmaxWeights => (row[e] as f64).exp(),
                _ => aff[e],
            })
            .collect();
        let sum: f64 = ws.iter().sum();
        for (&e, &x) in chosen.iter().zip(&ws) {
            idx.push(e as i32);
            let x = if v == GateVariant::NotNormalised { x } else { x / sum };
            w.push(if v == GateVariant::NoRouteScale { x } else { x * g.route_scale as f64 });
        }
    }
    (idx, w)
}

/// The `k` allowed indices of highest value, highest first; ties go to the lower index.
fn top_indices(values: &[f64], k: usize, allowed: &[bool]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).filter(|&i| allowed[i]).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    order.truncate(k);
    order
}

/// The experts' weights: expert e is `y = W2 relu(W1 x)`, W1 `ffn × hidden` and W2
/// `hidden × ffn`, row-major, stored expert after expert.
#[derive(Debug, Clone)]
pub struct Experts {
    pub count: usize,
    pub hidden: usize,
    pub ffn: usize,
    pub w1: Vec<f32>,
    pub w2: Vec<f32>,
}

impl Experts {
    /// Weights drawn uniformly from ±1/√fan-in, so activations keep their scale.
    pub fn random(count: usize, hidden: usize, ffn: usize, rng: &mut crate::rng::Rng) -> Experts {
        let (a1, a2) = (1.0 / (hidden as f32).sqrt(), 1.0 / (ffn as f32).sqrt());
        let w1 = rng.vec_f32(count * ffn * hidden, -a1, a1);
        let w2 = rng.vec_f32(count * hidden * ffn, -a2, a2);
        Experts { count, hidden, ffn, w1, w2 }
    }

    /// The weights of experts `first..first + n` (one rank's share), W1s then W2s.
    pub fn slice(&self, first: usize, n: usize) -> (&[f32], &[f32]) {
        let (a, b) = (self.ffn * self.hidden, self.hidden * self.ffn);
        (&self.w1[first * a..(first + n) * a], &self.w2[first * b..(first + n) * b])
    }

    /// Expert `e` applied to `x`, in f64.
    pub fn apply(&self, e: usize, x: &[f32]) -> Vec<f64> {
        called("gpubook_labs::ep::reference::Experts::apply");
        let (h, f) = (self.hidden, self.ffn);
        let (w1, w2) = (&self.w1[e * f * h..(e + 1) * f * h], &self.w2[e * h * f..(e + 1) * h * f]);
        let act: Vec<f64> = (0..f)
            .map(|j| {
                let z: f64 = (0..h).map(|i| w1[j * h + i] as f64 * x[i] as f64).sum();
                z.max(0.0)
            })
            .collect();
        (0..h).map(|i| (0..f).map(|j| w2[i * f + j] as f64 * act[j]).sum()).collect()
    }
}

/// A dense MoE layer on the host: `out[t] = sum_k w[t][k] · expert_{idx[t][k]}(x[t])`, f64,
/// `threads` tokens at a time.
pub fn dense_moe(x: &[f32], routing: &HostRouting, experts: &Experts) -> Vec<f64> {
    called("gpubook_labs::ep::reference::dense_moe");
    let h = experts.hidden;
    let tokens = x.len() / h;
    let mut out = vec![0.0f64; tokens * h];
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(32);
    let per = tokens.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for (c, chunk) in out.chunks_mut(per * h).enumerate() {
            scope.spawn(move || {
                // A worker of this reference, not an answer: its calls to `Experts::apply` must not
                // count against an answer graded meanwhile on another thread (the call that
                // matters, to dense_moe itself, was recorded above on the caller's thread).
                gpubook::reference::grader_thread();
                for (i, row) in chunk.chunks_mut(h).enumerate() {
                    let t = c * per + i;
                    for (&e, &w) in routing.experts_of(t).iter().zip(routing.weights_of(t)) {
                        let y = experts.apply(e as usize, &x[t * h..(t + 1) * h]);
                        for (o, v) in row.iter_mut().zip(y) {
                            *o += w as f64 * v;
                        }
                    }
                }
            });
        }
    });
    out
}

/// The dispatch traffic of DeepEP's two-hop path, for tokens routed by `topk_idx` (one vector
/// per rank, `tokens × topk`), each message `message_bytes`: a token on rank (a, l) crosses IB
/// once to every other node that holds one of its experts, landing on rank (b, l), and is
/// forwarded over NVLink to every rank of a node it reached whose index is not l (its own node
/// counts as reached: there the first hop is a copy in its own memory).
pub fn two_hop_traffic(topo: Topology, experts: usize, topk: usize, topk_idx: &[Vec<i32>], message_bytes: u64) -> TrafficCount {
    called("gpubook_labs::ep::reference::two_hop_traffic");
    let per_rank = experts / topo.ranks();
    let mut c = TrafficCount::default();
    for (s, idx) in topk_idx.iter().enumerate() {
        for row in idx.chunks(topk.max(1)) {
            let mut ranks: Vec<usize> = row.iter().map(|&e| e as usize / per_rank).collect();
            ranks.sort();
            ranks.dedup();
            let mut nodes: Vec<usize> = ranks.iter().map(|&d| topo.node_of(d)).collect();
            nodes.dedup();
            c.ib_messages += nodes.iter().filter(|&&b| b != topo.node_of(s)).count() as u64;
            c.nvlink_messages += ranks.iter().filter(|&&d| topo.local_of(d) != topo.local_of(s)).count() as u64;
        }
    }
    c.ib_bytes = c.ib_messages * message_bytes;
    c.nvlink_bytes = c.nvlink_messages * message_bytes;
    c
}

/// The traffic if every token went straight to every rank that holds one of its experts, one
/// message per (token, rank): over IB to other nodes, over NVLink inside its own.
pub fn direct_traffic(topo: Topology, experts: usize, topk: usize, topk_idx: &[Vec<i32>], message_bytes: u64) -> TrafficCount {
    called("gpubook_labs::ep::reference::direct_traffic");
    let per_rank = experts / topo.ranks();
    let mut c = TrafficCount::default();
    for (s, idx) in topk_idx.iter().enumerate() {
        for row in idx.chunks(topk.max(1)) {
            let mut ranks: Vec<usize> = row.iter().map(|&e| e as usize / per_rank).collect();
            ranks.sort();
            ranks.dedup();
            for d in ranks.into_iter().filter(|&d| d != s) {
                if topo.same_node(s, d) {
                    c.nvlink_messages += 1;
                } else {
                    c.ib_messages += 1;
                }
            }
        }
    }
    c.ib_bytes = c.ib_messages * message_bytes;
    c.nvlink_bytes = c.nvlink_messages * message_bytes;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the research notes: 4 nodes of 2 experts, K = 4, M = 2.
    #[test]
    fn node_limited_gate_worked_example() {
        let scores = [0.90f64, 0.10, 0.60, 0.55, 0.80, 0.05, 0.50, 0.45];
        // Logits whose sigmoids are these scores, no bias.
        let logits: Vec<f32> = scores.iter().map(|&s| (s / (1.0 - s)).ln() as f32).collect();
        let limited = GateConfig { experts: 8, groups: 4, topk_groups: 2, topk: 4, route_scale: 1.0 };
        let r = gate(&logits, &[0.0; 8], &limited).unwrap();
        assert_eq!(r.topk_idx, [0, 2, 3, 1], "nodes 0 and 1 (top-2 sums 1.00, 1.15) win");
        let free = gate(&logits, &[0.0; 8], &GateConfig::plain(8, 4, 1.0)).unwrap();
        assert_eq!(free.topk_idx, [0, 4, 2, 3], "unlimited, the token reaches three nodes");
        let sum: f32 = r.topk_weights.iter().sum();
        assert!((sum - 1.0).abs() < 1e-6);
    }

    #[test]
    fn the_bias_chooses_but_does_not_weigh() {
        let logits = [0.0f32, 0.0, 2.0];
        let r = gate(&logits, &[1.0, 0.0, 0.0], &GateConfig::plain(3, 1, 1.0)).unwrap();
        assert_eq!((r.topk_idx[0], r.topk_weights[0]), (0, 1.0), "expert 0 wins on its bias, and one weight is 1");
        let r2 = gate(&logits, &[1.0, 0.0, 0.0], &GateConfig::plain(3, 2, 1.0)).unwrap();
        let (s0, s2) = (0.5f64, 1.0 / (1.0 + (-2.0f64).exp()));
        assert_eq!(r2.topk_idx, [0, 2]);
        assert!((r2.topk_weights[0] as f64 - s0 / (s0 + s2)).abs() < 1e-6, "weights from the unbiased affinities");
    }

    #[test]
    fn two_hop_counts_one_ib_message_per_node() {
        // 2 nodes of 2 GPUs, 1 expert per rank. A token on rank 0 with experts on ranks 1, 2, 3.
        let topo = Topology::new(2, 2).unwrap();
        let c = two_hop_traffic(topo, 4, 3, &[vec![1, 2, 3], vec![], vec![], vec![]], 10);
        // IB: once to node 1 (rank 2). NVLink: rank 1 (local 1) and rank 3 (local 1); rank 2 has local 0.
        assert_eq!((c.ib_messages, c.nvlink_messages, c.ib_bytes), (1, 2, 10));
        let d = direct_traffic(topo, 4, 3, &[vec![1, 2, 3], vec![], vec![], vec![]], 10);
        assert_eq!((d.ib_messages, d.nvlink_messages), (2, 1));
    }
}
