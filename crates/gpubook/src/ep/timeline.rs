//! A world's run as phases: the work between two barriers. Each rank's kernels take the time its
//! device's trace gives them (CUDA events on a GPU, the emulator's cost model on a CPU); the
//! links take the time the [`LinkModel`](super::LinkModel) gives the traffic the phase recorded.
//! Ranks are laid side by side as on separate GPUs: a phase starts when the slowest rank ended
//! the one before (the barrier) and a rank's share of it lasts as long as the longer of its kernels
//! and its busiest link.

use super::links::{Link, LinkModel, Traffic};
use super::world::World;
use crate::gpu::{Gpu, OpKind, Result, Trace};
use serde::Serialize;

/// One rank's share of a phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RankPhase {
    /// Its kernels in issue order: (name, microseconds).
    pub kernels: Vec<(String, f64)>,
    pub kernel_us: f64,
    /// Modelled time its NVLink and its NIC are busy.
    pub nvlink_us: f64,
    pub ib_us: f64,
}

impl RankPhase {
    pub fn span_us(&self) -> f64 {
        self.kernel_us.max(self.nvlink_us).max(self.ib_us)
    }
}

/// The work between two barriers.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// The kernels that ran in it, by name.
    pub label: String,
    pub start_us: f64,
    pub ranks: Vec<RankPhase>,
    pub traffic: Traffic,
}

impl Phase {
    pub fn span_us(&self) -> f64 {
        self.ranks.iter().map(RankPhase::span_us).fold(0.0, f64::max)
    }
    pub fn kernel_us(&self) -> f64 {
        self.ranks.iter().map(|r| r.kernel_us).fold(0.0, f64::max)
    }
    pub fn link_us(&self) -> f64 {
        self.ranks.iter().map(|r| r.nvlink_us.max(r.ib_us)).fold(0.0, f64::max)
    }
}

/// A world's phases on one modelled clock.
#[derive(Debug, Clone, Serialize)]
pub struct WorldTimeline {
    pub nodes: usize,
    pub gpus_per_node: usize,
    pub phases: Vec<Phase>,
    pub links: LinkModel,
    /// Where the kernel times come from, in words.
    pub kernels_from: String,
}

impl WorldTimeline {
    pub fn total_us(&self) -> f64 {
        self.phases.last().map(|p| p.start_us + p.span_us()).unwrap_or(0.0)
    }
    pub fn ranks(&self) -> usize {
        self.nodes * self.gpus_per_node
    }
}

impl World {
    /// The world's phases so far (waits for the work to finish, to read its times). Phases with
    /// no kernel and no traffic (set-up between barriers) are left out.
    pub fn timeline(&self) -> Result<WorldTimeline> {
        let ranks = self.size();
        let barriers = self.barriers();
        let traffic = self.traffic();
        let mut per_epoch: Vec<Vec<RankPhase>> = vec![vec![RankPhase::default(); ranks]; barriers + 1];
        let mut seen: Vec<&Gpu> = Vec::new();
        for slot in 0..self.slot_count() {
            let gpu = self.slot_gpu(slot);
            if seen.iter().any(|g| g.is_same_device(gpu)) {
                continue;
            }
            seen.push(gpu);
            let trace = gpu.trace()?;
            self.add_kernels(gpu, &trace, barriers, &mut per_epoch);
        }
        let links = self.links();
        let mut phases = Vec::new();
        let mut clock = 0.0;
        for (epoch, mut rp) in per_epoch.into_iter().enumerate() {
            let tr = traffic.get(epoch).cloned().unwrap_or_default();
            for (r, p) in rp.iter_mut().enumerate() {
                p.nvlink_us = tr.busy_us(&links, r, Link::NvLink);
                p.ib_us = tr.busy_us(&links, r, Link::Ib);
            }
            let any = rp.iter().any(|p| !p.kernels.is_empty()) || !tr.transfers.is_empty();
            if !any {
                continue;
            }
            let mut names: Vec<String> = Vec::new();
            for p in &rp {
                for (k, _) in &p.kernels {
                    if !names.contains(k) {
                        names.push(k.clone());
                    }
                }
            }
            let phase = Phase { label: names.join(" + "), start_us: clock, ranks: rp, traffic: tr };
            clock += phase.span_us();
            phases.push(phase);
        }
        let topo = self.topology();
        let first = self.rank(0).gpu();
        let kernels_from = match first.backend() {
            crate::gpu::BackendKind::Cuda => format!("measured with CUDA events on {}", first.info().name),
            crate::gpu::BackendKind::Emulator => "the CPU emulator's cost model".to_string(),
        };
        Ok(WorldTimeline { nodes: topo.nodes(), gpus_per_node: topo.gpus_per_node(), phases, links, kernels_from })
    }

    /// Adds each launch in `trace` (of device `gpu`) to its rank and epoch. A barrier leaves one
    /// event record on each barrier stream; counting them gives the epoch. A trace cleared since
    /// the world began holds only the last barriers: its epochs are counted back from the end.
    fn add_kernels(&self, gpu: &Gpu, trace: &Trace, barriers: usize, per_epoch: &mut [Vec<RankPhase>]) {
        let slots_here: Vec<usize> = (0..self.slot_count()).filter(|&s| self.slot_gpu(s).is_same_device(gpu)).collect();
        let barrier_streams: Vec<u32> = slots_here.iter().map(|&s| self.barrier_stream(s)).collect();
        let is_mark = |o: &crate::gpu::TraceOp| matches!(o.kind, OpKind::RecordEvent) && barrier_streams.contains(&o.stream);
        let marks_in_trace = trace.ops.iter().filter(|o| is_mark(o)).count() / slots_here.len();
        let offset = barriers.saturating_sub(marks_in_trace);
        let rank_of =
            |stream: u32| (0..self.size()).find(|&r| slots_here.contains(&self.slot_of(r)) && self.rank(r).stream().id() == stream);
        let mut marks = 0;
        for op in &trace.ops {
            if is_mark(op) {
                marks += 1;
                continue;
            }
            let OpKind::Launch { kernel, .. } = &op.kind else { continue };
            let Some(r) = rank_of(op.stream) else { continue };
            let epoch = (offset + marks / slots_here.len()).min(per_epoch.len() - 1);
            let p = &mut per_epoch[epoch][r];
            p.kernels.push((kernel.clone(), op.duration_us()));
            p.kernel_us += op.duration_us();
        }
    }
}
