//! A whole MoE layer across a world, as `gpubook moe run` runs it: gate, layout, count exchange,
//! dispatch (inside a node, or DeepEP's two-hop path across nodes), experts, combine; then the
//! output against a dense MoE computed on the host. Reference code (it starts with
//! `reference::called`): the exercises of chapters 12 and 13 build the same pieces.

pub use super::config::{MAX_HIDDEN, MoeConfig, ROUTE_SCALE, wrap};
use super::kernels::Kernels;
use super::reference::{self, Experts, HostRouting};
use crate::rng::Rng;
use gpubook::ep::Symmetric;
use gpubook::ep::Topology;
use gpubook::ep::World;
use gpubook::ep::WorldTimeline;
use gpubook::ep::{Link, Traffic};
use gpubook::ep::{RdmaBuffers as Rdma, Received};
use gpubook::gpu::{DeviceSlice, Gpu, Result as GpuResult};
use serde::Serialize;

/// What a run produced and measured.
#[derive(Debug, Clone, Serialize)]
pub struct MoeRun {
    pub config: MoeConfig,
    /// max |out - ref| / max |ref| over every output element.
    pub max_rel_error: f64,
    pub max_abs_error: f64,
    /// Tokens whose experts the GPU's gate chose as the host's does, of all tokens.
    pub routing_agreement: (usize, usize),
    /// Each phase with traffic: its name and what it moved.
    pub traffic: Vec<(String, Traffic)>,
    /// IB messages of the dispatch, and what they would be without per-node deduplication: one
    /// per (token, remote rank), and one per (token, remote expert).
    pub ib_messages: u64,
    pub ib_messages_per_rank: u64,
    pub ib_messages_per_expert: u64,
    pub timeline: WorldTimeline,
    pub backend: String,
}

/// Bytes of the messages each phase sends.
fn token_message_bytes(c: &MoeConfig) -> u64 {
    (c.hidden * 4 + c.topk * 8 + 4) as u64 // row, topk_idx and weights, source index
}
fn rdma_message_bytes(c: &MoeConfig) -> u64 {
    (c.hidden * 4 + (1 + c.topk + c.gpus_per_node) * 4 + c.topk * 4) as u64
}
fn row_bytes(c: &MoeConfig) -> u64 {
    (c.hidden * 4) as u64
}

/// One rank's inputs on its device.
struct RankData {
    x: DeviceSlice<f32>,
    logits: DeviceSlice<f32>,
    bias: DeviceSlice<f32>,
    w1: DeviceSlice<f32>,
    w2: DeviceSlice<f32>,
}

/// Runs the layer on `gpu` (all ranks on it) and checks it against the host.
pub fn run(gpu: &Gpu, cfg: &MoeConfig) -> anyhow::Result<MoeRun> {
    gpubook::reference::called("gpubook_labs::ep::moe::run");
    cfg.check()?;
    let topo = cfg.topology()?;
    let world = World::new(gpu, topo)?;
    let (r_n, t_n, h, e_n, k) = (topo.ranks(), cfg.tokens, cfg.hidden, cfg.experts, cfg.topk);
    let per_rank = e_n / r_n;
    let mut rng = Rng::new(cfg.seed);
    let xs: Vec<Vec<f32>> = (0..r_n).map(|_| rng.vec_f32(t_n * h, -1.0, 1.0)).collect();
    let logits: Vec<Vec<f32>> = (0..r_n).map(|_| rng.vec_f32(t_n * e_n, -4.0, 4.0)).collect();
    let bias = rng.vec_f32(e_n, -0.1, 0.1);
    let experts = Experts::random(e_n, h, cfg.ffn(), &mut rng);
    let kernels = Kernels::load(gpu)?;

    let mut data = Vec::with_capacity(r_n);
    for (r, rank) in world.ranks().iter().enumerate() {
        let s = rank.stream();
        let (w1, w2) = experts.slice(r * per_rank, per_rank);
        data.push(RankData {
            x: s.clone_htod(&xs[r])?,
            logits: s.clone_htod(&logits[r])?,
            bias: s.clone_htod(&bias)?,
            w1: s.clone_htod(w1)?,
            w2: s.clone_htod(w2)?,
        });
    }
    world.barrier()?;

    let gate_cfg = cfg.gate();
    let mut phases = Phases::default();
    // Gate and layout: each rank alone.
    let mut routing = Vec::new();
    let mut layouts = Vec::new();
    for (r, d) in data.iter().enumerate() {
        let s = world.rank(r).stream();
        let (idx, w) = kernels.gate(s, &d.logits, &d.bias, t_n, &gate_cfg)?;
        layouts.push(kernels.layout(s, &idx, t_n, k, e_n, r_n)?);
        routing.push((idx, w));
    }
    world.barrier()?;

    // notify_dispatch: the count matrix, everywhere.
    let counts = Symmetric::<i32>::zeros(&world, r_n * r_n, "per_rank_buffer")?;
    let p = phases.open(&world, "notify_dispatch", (r_n * 4) as u64, false)?;
    for (r, layout) in layouts.iter().enumerate() {
        kernels.notify(world.rank(r).stream(), &layout.num_tokens_per_rank, counts.peers(r), phases.moved(p, r), r_n, r)?;
    }
    world.barrier()?;
    // As DeepEP's normal mode does, the host learns how much each rank receives, to size the
    // receive buffers: R × R counts, no token data.
    let matrix = world.rank(0).stream().clone_dtoh(counts.on(0))?;
    let num_recv: Vec<usize> = (0..r_n).map(|d| (0..r_n).map(|s| matrix[s * r_n + d] as usize).sum()).collect();
    let cap = num_recv.iter().copied().max().unwrap_or(0).max(1);
    let recv = alloc_received(&world, cap, h, k)?;

    let two_hop = topo.nodes() > 1;
    let rdma = if two_hop { Some(alloc_rdma(&world, cfg)?) } else { None };
    if let Some(rdma) = &rdma {
        let p = phases.open(&world, "dispatch_rdma", rdma_message_bytes(cfg), false)?;
        for (r, d) in data.iter().enumerate() {
            let (idx, w) = &routing[r];
            kernels.dispatch_rdma(world.rank(r).stream(), cfg, &d.x, idx, w, &layouts[r].send_pos, rdma, phases.moved(p, r), r)?;
        }
        world.barrier()?;
        let p = phases.open(&world, "dispatch_forward", token_message_bytes(cfg), false)?;
        for r in 0..r_n {
            kernels.dispatch_forward(world.rank(r).stream(), cfg, rdma, counts.on(r), &recv, phases.moved(p, r), r)?;
        }
    } else {
        let p = phases.open(&world, "dispatch", token_message_bytes(cfg), false)?;
        for (r, d) in data.iter().enumerate() {
            let (idx, w) = &routing[r];
            kernels.dispatch(
                world.rank(r).stream(),
                cfg,
                &d.x,
                idx,
                w,
                &layouts[r].send_pos,
                counts.on(r),
                &recv,
                phases.moved(p, r),
                r,
            )?;
        }
    }
    world.barrier()?;

    // The experts: local work on what arrived.
    let mut expert_out = Vec::with_capacity(r_n);
    for (r, d) in data.iter().enumerate() {
        // SAFETY: the rows the combine reads (experts on this rank) are written by the kernel.
        let mut out = unsafe { world.rank(r).stream().alloc::<f32>(cap * k * h) }?;
        kernels.experts(world.rank(r).stream(), cfg, &recv, r, &d.w1, &d.w2, &mut out, num_recv[r])?;
        expert_out.push(out);
    }
    world.barrier()?;

    let routes = if two_hop { topo.nodes() } else { r_n };
    // SAFETY: combine_reduce reads only the rows of routes the token took, which are written.
    let mut combine_buf = unsafe { Symmetric::<f32>::alloc(&world, t_n * routes * h, "combine_buf") }?;
    if let Some(rdma) = &rdma {
        // SAFETY: partial rows 0..num_recv are written by combine_local before they are read.
        let mut partial = unsafe { Symmetric::<f32>::alloc(&world, cap * h, "partial") }?;
        for r in 0..r_n {
            kernels.combine_local(world.rank(r).stream(), cfg, &recv, r, &expert_out[r], partial.on_mut(r), num_recv[r])?;
        }
        world.barrier()?;
        let p = phases.open(&world, "combine_forward", row_bytes(cfg), true)?;
        for r in 0..r_n {
            kernels.combine_forward(world.rank(r).stream(), cfg, rdma, counts.on(r), &partial, &combine_buf, phases.moved(p, r), r)?;
        }
        world.barrier()?;
        world.synchronize()?; // peers read `partial` until here
    } else {
        let p = phases.open(&world, "combine", row_bytes(cfg), false)?;
        for r in 0..r_n {
            kernels.combine(world.rank(r).stream(), cfg, &recv, r, &expert_out[r], &combine_buf, phases.moved(p, r), num_recv[r])?;
        }
        world.barrier()?;
    }
    let mut outs = Vec::with_capacity(r_n);
    let group = if two_hop { topo.gpus_per_node() } else { 1 };
    for (r, layout) in layouts.iter().enumerate() {
        let s = world.rank(r).stream();
        // SAFETY: combine_reduce writes every element.
        let mut out = unsafe { s.alloc::<f32>(t_n * h) }?;
        kernels.combine_reduce(s, cfg, combine_buf.on_mut(r), &layout.send_pos, &mut out, group)?;
        outs.push(out);
    }
    world.barrier()?;
    world.synchronize()?;

    // Traffic, from the kernels' counters.
    let traffic = phases.traffic(&world)?;
    let timeline = world.timeline()?;

    // Check against the host: the routing, then the layer's output with the GPU's routing.
    let mut agree = 0;
    let mut max_err = 0.0f64;
    let mut max_ref = 0.0f64;
    let mut host_idx = Vec::with_capacity(r_n);
    for r in 0..r_n {
        let s = world.rank(r).stream();
        let idx = s.clone_dtoh(&routing[r].0)?;
        let w = s.clone_dtoh(&routing[r].1)?;
        let host = reference::gate(&logits[r], &bias, &gate_cfg)?;
        agree += (0..t_n).filter(|&t| host.experts_of(t) == &idx[t * k..(t + 1) * k]).count();
        let gpu_routing = HostRouting { topk: k, topk_idx: idx.clone(), topk_weights: w };
        let want = reference::dense_moe(&xs[r], &gpu_routing, &experts);
        let got = s.clone_dtoh(&outs[r])?;
        for (g, w) in got.iter().zip(&want) {
            max_err = max_err.max((*g as f64 - w).abs());
            max_ref = max_ref.max(w.abs());
        }
        host_idx.push(idx);
    }
    let (per_rank_msgs, per_expert_msgs) = undeduplicated_ib(topo, e_n, k, &host_idx);
    let ib_messages = traffic.iter().filter(|(n, _)| n.starts_with("dispatch")).map(|(_, t)| t.messages(Link::Ib)).sum();
    Ok(MoeRun {
        config: *cfg,
        max_rel_error: if max_ref > 0.0 { max_err / max_ref } else { max_err },
        max_abs_error: max_err,
        routing_agreement: (agree, r_n * t_n),
        traffic,
        ib_messages,
        ib_messages_per_rank: per_rank_msgs,
        ib_messages_per_expert: per_expert_msgs,
        timeline,
        backend: crate::backend::backend_label(gpu),
    })
}

/// The relative error `moe run` must reach on f32.
pub const TOLERANCE: f64 = 1e-4;

impl MoeRun {
    pub fn within_tolerance(&self) -> bool {
        self.max_rel_error <= TOLERANCE
    }

    /// What `gpubook moe run` prints after its header: the links' statement, the checks, the
    /// traffic of each phase, the deduplication, and the phases' times.
    pub fn report(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(o, "{}\n", wrap(&self.timeline.links.statement(), 88));
        let (agree, all) = self.routing_agreement;
        let _ = writeln!(o, "gate:   the GPU chose the host's experts for {agree} of {all} tokens");
        let _ = writeln!(
            o,
            "output: max error against a dense MoE on the host {:.2e} relative: {}",
            self.max_rel_error,
            if self.within_tolerance() { "ok (≤ 1e-4)" } else { "TOO LARGE (> 1e-4)" }
        );
        let _ = writeln!(o, "        (max |out - ref| / max |ref|; {:.2e} absolute)", self.max_abs_error);
        let _ = writeln!(o, "\n{:<18} {:>13} {:>9} {:>13} {:>9}", "traffic", "NVLink bytes", "messages", "IB bytes", "messages");
        for (name, t) in &self.traffic {
            let _ = writeln!(
                o,
                "{name:<18} {:>13} {:>9} {:>13} {:>9}",
                t.bytes(Link::NvLink),
                t.messages(Link::NvLink),
                t.bytes(Link::Ib),
                t.messages(Link::Ib)
            );
        }
        if self.config.nodes > 1 {
            let line = format!(
                "IB messages in the dispatch: {} (one per token and other node); one per (token, rank) would be {}, \
                 one per (token, expert) {}",
                self.ib_messages, self.ib_messages_per_rank, self.ib_messages_per_expert
            );
            let _ = writeln!(o, "\n{}", wrap(&line, 88));
        }
        let _ = writeln!(o, "\n{}", wrap(&format!("phases (kernels: {}; links modelled)", self.timeline.kernels_from), 88));
        let _ = writeln!(o, "{:<3} {:<44} {:>10} {:>9} {:>9}", "", "kernels", "kernels µs", "links µs", "phase µs");
        for (i, p) in self.timeline.phases.iter().enumerate() {
            let _ = writeln!(o, "{:<3} {:<44} {:>10.1} {:>9.1} {:>9.1}", i + 1, p.label, p.kernel_us(), p.link_us(), p.span_us());
        }
        let _ = writeln!(o, "{:<3} {:<44} {:>10} {:>9} {:>9.1}", "", "total", "", "", self.timeline.total_us());
        o
    }
}

/// IB messages a dispatch without per-node deduplication would send: one per (token, rank on
/// another node), and one per (token, expert on another node).
fn undeduplicated_ib(topo: Topology, experts: usize, topk: usize, idx: &[Vec<i32>]) -> (u64, u64) {
    let per_rank = experts / topo.ranks();
    let (mut per_rank_msgs, mut per_expert_msgs) = (0, 0);
    for (s, rows) in idx.iter().enumerate() {
        for row in rows.chunks(topk) {
            let mut ranks: Vec<usize> = row.iter().map(|&e| e as usize / per_rank).filter(|&d| !topo.same_node(s, d)).collect();
            per_expert_msgs += ranks.len() as u64;
            ranks.sort();
            ranks.dedup();
            per_rank_msgs += ranks.len() as u64;
        }
    }
    (per_rank_msgs, per_expert_msgs)
}

fn alloc_received(world: &World, cap: usize, hidden: usize, topk: usize) -> GpuResult<Received> {
    // SAFETY: slots 0..num_recv are written by the dispatch; nothing reads past them.
    unsafe {
        Ok(Received {
            x: Symmetric::alloc(world, cap * hidden, "recv_x")?,
            topk_idx: Symmetric::alloc(world, cap * topk, "recv_topk_idx")?,
            topk_weights: Symmetric::alloc(world, cap * topk, "recv_topk_weights")?,
            src: Symmetric::alloc(world, cap, "recv_src")?,
        })
    }
}

/// The RDMA buffers: on every rank, one region of `tokens` messages per source node.
fn alloc_rdma(world: &World, c: &MoeConfig) -> GpuResult<Rdma> {
    let slots = c.nodes * c.tokens;
    // SAFETY: messages 0..count of each region are written before they are read.
    unsafe {
        Ok(Rdma {
            x: Symmetric::alloc(world, slots * c.hidden, "rdma_x")?,
            meta: Symmetric::alloc(world, slots * (1 + c.topk + c.gpus_per_node), "rdma_meta")?,
            topk_weights: Symmetric::alloc(world, slots * c.topk, "rdma_topk_weights")?,
            count: Symmetric::zeros(world, c.nodes, "rdma_count")?,
        })
    }
}

/// The communication phases: where their kernels count messages, and each message's size.
#[derive(Default)]
struct Phases {
    open: Vec<PhaseCounters>,
}

struct PhaseCounters {
    name: &'static str,
    epoch: usize,
    bytes: u64,
    /// Whether the second half of `moved` (messages read from peers) carries bytes too.
    pulls: bool,
    moved: Vec<DeviceSlice<i32>>,
}

impl Phases {
    /// A phase starting now (in the world's open epoch), its messages `bytes` each: zeroed
    /// counters for its kernels, `2 × ranks` per rank.
    fn open(&mut self, world: &World, name: &'static str, bytes: u64, pulls: bool) -> GpuResult<usize> {
        let moved = world.ranks().iter().map(|r| r.stream().alloc_zeros::<i32>(2 * world.size())).collect::<GpuResult<Vec<_>>>()?;
        self.open.push(PhaseCounters { name, epoch: world.epoch(), bytes, pulls, moved });
        Ok(self.open.len() - 1)
    }

    fn moved(&mut self, phase: usize, rank: usize) -> &mut DeviceSlice<i32> {
        &mut self.open[phase].moved[rank]
    }

    /// Reads the counters (after the work is done), records each phase's traffic in its epoch.
    fn traffic(&self, world: &World) -> GpuResult<Vec<(String, Traffic)>> {
        let topo = world.topology();
        let ranks = world.size();
        let mut out = Vec::new();
        for p in &self.open {
            let mut t = Traffic::default();
            for (r, m) in p.moved.iter().enumerate() {
                let counts = world.rank(r).stream().clone_dtoh(m)?;
                for d in 0..ranks {
                    t.add(&topo, r, d, counts[d] as u64, p.bytes);
                    if p.pulls {
                        t.add(&topo, d, r, counts[ranks + d] as u64, p.bytes);
                    }
                }
            }
            world.record_traffic_in(p.epoch, &t);
            out.push((p.name.to_string(), t));
        }
        Ok(out)
    }
}
