//! The world: R ranks, each with its device, its stream and its share of every symmetric buffer.
//!
//! Where the ranks live:
//! - **one device** ([`World::new`]): the CPU emulator or one GPU holds all R ranks. It is one
//!   memory, so a rank's pointer into a peer's buffer is valid and a store through it is a real
//!   store, as over NVLink. Each rank has its own stream.
//! - **several devices** ([`World::spread`]): ranks spread over GPUs in contiguous groups (a node's
//!   ranks stay together), with peer access enabled between every pair, so the same kernels store
//!   into another GPU's memory.
//!
//! What is not there (the wires between GPUs and nodes) is modelled by [`LinkModel`], from the
//! traffic the kernels report; see [`World::record_traffic`].

use super::links::{LinkModel, Traffic};
use super::topology::Topology;
use crate::gpu::{BackendKind, Gpu, GpuError, OpKind, Result, Stream, Trace};
use crate::sync::lock;
use std::sync::{Arc, Mutex};

/// One rank: where it runs and the stream its work goes on.
pub struct Rank {
    index: usize,
    node: usize,
    local: usize,
    slot: usize,
    stream: Arc<Stream>,
}

impl Rank {
    pub fn index(&self) -> usize {
        self.index
    }
    /// Its node (DeepEP's RDMA rank).
    pub fn node(&self) -> usize {
        self.node
    }
    /// Its place in the node (DeepEP's NVL rank).
    pub fn local(&self) -> usize {
        self.local
    }
    pub fn gpu(&self) -> &Gpu {
        self.stream.gpu()
    }
    /// The rank's own stream: its kernels run in order on it, and other ranks' work only waits for
    /// it at a [`World::barrier`].
    pub fn stream(&self) -> &Arc<Stream> {
        &self.stream
    }
}

/// A device the world uses, with the stream its barriers gather on.
struct Slot {
    gpu: Gpu,
    barrier: Arc<Stream>,
}

/// R ranks in nodes of G. Build it with [`World::new`] (every rank on one device) or
/// [`World::spread`] (ranks over several devices).
pub struct World {
    topo: Topology,
    ranks: Vec<Rank>,
    slots: Vec<Slot>,
    links: LinkModel,
    log: Mutex<Log>,
}

/// What the world has recorded: barriers so far, and the traffic of each epoch (the work
/// between two barriers).
#[derive(Default)]
struct Log {
    barriers: usize,
    traffic: Vec<Traffic>,
}

impl World {
    /// Every rank on `gpu`, each with its own stream.
    pub fn new(gpu: &Gpu, topo: Topology) -> Result<World> {
        World::spread(std::slice::from_ref(gpu), topo)
    }

    /// The ranks spread over `gpus` in contiguous groups: rank r on `gpus[r * D / R]`. Peer
    /// access is enabled between every pair of distinct CUDA devices. The emulator's devices
    /// each have their own memory, so on the emulator every entry must be the same device.
    pub fn spread(gpus: &[Gpu], topo: Topology) -> Result<World> {
        if gpus.is_empty() {
            return Err(GpuError::Size("World::spread needs at least one device".into()));
        }
        check_shared_memory(gpus)?;
        if gpus[0].backend() == BackendKind::Cuda {
            super::peer::enable_all(gpus)?;
        }
        let slots = gpus.iter().map(|g| Ok(Slot { gpu: g.clone(), barrier: g.new_stream()? })).collect::<Result<Vec<_>>>()?;
        let r_total = topo.ranks();
        let mut ranks = Vec::with_capacity(r_total);
        for r in 0..r_total {
            let slot = r * gpus.len() / r_total;
            ranks.push(Rank { index: r, node: topo.node_of(r), local: topo.local_of(r), slot, stream: gpus[slot].new_stream()? });
        }
        let log = Log { barriers: 0, traffic: vec![Traffic::default()] };
        Ok(World { topo, ranks, slots, links: LinkModel::default(), log: Mutex::new(log) })
    }

    pub fn topology(&self) -> Topology {
        self.topo
    }
    pub fn size(&self) -> usize {
        self.ranks.len()
    }
    pub fn rank(&self, r: usize) -> &Rank {
        &self.ranks[r]
    }
    pub fn ranks(&self) -> &[Rank] {
        &self.ranks
    }
    /// The devices the ranks run on, in order (one entry per device given to `spread`).
    pub fn devices(&self) -> impl Iterator<Item = &Gpu> {
        self.slots.iter().map(|s| &s.gpu)
    }
    pub fn links(&self) -> LinkModel {
        self.links
    }
    pub fn set_links(&mut self, links: LinkModel) {
        self.links = links;
    }

    /// Every rank's later work waits for every rank's earlier work: what DeepEP's
    /// `barrier_block` does inside its kernels, done here between kernels with events. On one
    /// device: each rank's stream records an event, the device's barrier stream waits for all of
    /// them and records one event, and every rank's stream waits for that. Across devices the
    /// host waits for each device's barrier stream (events of one device cannot order another's).
    pub fn barrier(&self) -> Result<()> {
        for (i, slot) in self.slots.iter().enumerate() {
            for rank in self.ranks.iter().filter(|r| r.slot == i) {
                slot.barrier.wait(&rank.stream.record_event()?)?;
            }
        }
        if self.slots.len() == 1 {
            let done = self.slots[0].barrier.record_event()?;
            for rank in &self.ranks {
                rank.stream.wait(&done)?;
            }
        } else {
            for slot in &self.slots {
                slot.barrier.record_event()?; // the barrier's mark in this device's trace
                slot.barrier.synchronize()?;
            }
        }
        let mut log = lock(&self.log);
        log.barriers += 1;
        log.traffic.push(Traffic::default());
        Ok(())
    }

    /// The host waits until every rank's work is done.
    pub fn synchronize(&self) -> Result<()> {
        for rank in &self.ranks {
            rank.stream.synchronize()?;
        }
        Ok(())
    }

    /// Barriers so far.
    pub fn barriers(&self) -> usize {
        lock(&self.log).barriers
    }

    /// The epoch now open: the work issued since barrier number `epoch()` (0 before the first).
    pub fn epoch(&self) -> usize {
        self.barriers()
    }

    /// Adds what the work since the last barrier sends over the links. The timeline turns it
    /// into link time.
    pub fn record_traffic(&self, traffic: &Traffic) {
        let epoch = self.epoch();
        self.record_traffic_in(epoch, traffic);
    }

    /// Adds what the work of `epoch` sent over the links: kernels count their messages on the
    /// device, and the host reads the counts once the work is done, perhaps several epochs later.
    pub fn record_traffic_in(&self, epoch: usize, traffic: &Traffic) {
        let mut log = lock(&self.log);
        if log.traffic.len() <= epoch {
            log.traffic.resize(epoch + 1, Traffic::default());
        }
        log.traffic[epoch].merge(traffic);
    }

    /// The traffic recorded in each epoch (epoch i ends at barrier i + 1).
    pub fn traffic(&self) -> Vec<Traffic> {
        lock(&self.log).traffic.clone()
    }

    /// The stream id of the barrier stream on device slot `slot`: its event records mark the
    /// barriers in that device's trace.
    pub(crate) fn barrier_stream(&self, slot: usize) -> u32 {
        self.slots[slot].barrier.id()
    }

    pub(crate) fn slot_of(&self, rank: usize) -> usize {
        self.ranks[rank].slot
    }

    pub(crate) fn slot_gpu(&self, slot: usize) -> &Gpu {
        &self.slots[slot].gpu
    }

    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The epoch (world barriers passed since the traces were cleared) of every launch of
    /// `kernel` on `gpu`, whose trace is `trace`: each world barrier leaves one event record on the barrier
    /// stream of each of the device's slots.
    pub fn launch_epochs(&self, gpu: &Gpu, trace: &Trace, kernel: &str) -> Vec<usize> {
        let slots: Vec<usize> = (0..self.slot_count()).filter(|&s| self.slot_gpu(s).is_same_device(gpu)).collect();
        let marks: Vec<u32> = slots.iter().map(|&s| self.barrier_stream(s)).collect();
        let mut seen = 0;
        let mut epochs = Vec::new();
        for o in &trace.ops {
            match &o.kind {
                OpKind::RecordEvent if marks.contains(&o.stream) => seen += 1,
                OpKind::Launch { kernel: k, .. } if k == kernel => epochs.push(seen / slots.len().max(1)),
                _ => {}
            }
        }
        epochs
    }
}

/// How many devices the expert-parallel graders and `gpubook moe run` spread a world over when
/// not told otherwise: `GPUBOOK_EP_DEVICES` (default 1, every rank on one device). The two-GPU
/// script sets it to 2.
pub const DEVICES_VAR: &str = "GPUBOOK_EP_DEVICES";

/// `GPUBOOK_EP_DEVICES`, or 1.
pub fn devices_from_env() -> usize {
    std::env::var(DEVICES_VAR).ok().and_then(|v| v.trim().parse().ok()).filter(|&n| n >= 1).unwrap_or(1)
}

/// `n` devices for [`World::spread`], `first` among them: on CUDA, devices 0, 1, ... n - 1,
/// wrapping onto the GPUs there are (with one GPU, several handles on it: separate `Gpu`s with
/// their own streams and traces over one memory, which is the several-device code path on one
/// device); on the emulator, `first` n times (its devices do not share memory). New handles
/// start with the default settings (no poison, no digests): set them as `first` has them.
pub fn spread_devices(first: &Gpu, n: usize) -> Result<Vec<Gpu>> {
    let mut gpus = vec![first.clone()];
    let count = if first.backend() == BackendKind::Cuda { Gpu::device_count()?.max(1) } else { 1 };
    for i in 1..n.max(1) {
        gpus.push(match first.backend() {
            BackendKind::Cuda => Gpu::with_ordinal((first.ordinal() + i) % count)?,
            BackendKind::Emulator => first.clone(),
        });
    }
    Ok(gpus)
}

/// The emulator's devices do not share memory: a store from a kernel on one into another's
/// buffer would land nowhere. Refuse such a world up front.
fn check_shared_memory(gpus: &[Gpu]) -> Result<()> {
    let first = &gpus[0];
    if first.backend() == BackendKind::Emulator && gpus.iter().any(|g| !g.is_same_device(first)) {
        return Err(GpuError::Unavailable {
            backend: "emulator",
            reason: "each emulated device has its own memory, so one rank's kernel cannot store into a rank on another".into(),
            fix: "put every rank on one emulated device (World::new), which is one memory as NVLink peers see it".into(),
        });
    }
    if gpus.iter().any(|g| g.backend() != first.backend()) {
        return Err(GpuError::Size("World::spread: every device must be on the same backend".into()));
    }
    Ok(())
}
