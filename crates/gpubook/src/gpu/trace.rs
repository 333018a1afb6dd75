//! The record of everything a `Gpu` did: allocations, frees, copies (direction, bytes, pinned or
//! not), memsets, launches (with their configuration), event records and waits, synchronisation.
//! Times come from CUDA events on a GPU and from the emulator's timeline model on a CPU, in
//! microseconds since the device was created. Graders and figures read it.

use super::ids::{BufferId, EventId, HostMem};
use super::repr::DeviceRepr;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CopyDir {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum OpKind {
    Alloc {
        buffer: BufferId,
        bytes: usize,
        label: String,
    },
    Free {
        buffer: BufferId,
        bytes: usize,
    },
    Copy {
        dir: CopyDir,
        bytes: usize,
        pinned: bool,
        src: Option<BufferId>,
        dst: Option<BufferId>,
        /// A digest of the host side's bytes ([`digest`]), when the device records them
        /// (`Gpu::set_content_digests`): what went up, and what came down once a synchronous
        /// copy finished, or, for copies from and to pinned memory (asynchronous: hashing before
        /// issuing one would hold the host up and stop the overlap the chapters measure), once the
        /// host next waits for the buffer's copies. `None` for device-to-device copies.
        digest: Option<u64>,
        /// The host address of the host side's first byte (`None` for device-to-device copies):
        /// which pinned buffer, and where in it, a chunk went or came from. Not serialised (it
        /// changes from run to run).
        #[serde(skip_serializing)]
        host: Option<u64>,
    },
    Memset {
        buffer: BufferId,
        bytes: usize,
        value: u8,
    },
    Launch {
        kernel: String,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem_bytes: u32,
        buffers: Vec<(BufferId, bool)>,
        /// What the kernel did to memory: the emulator's check mode counts it; None on a GPU
        /// and in the emulator's fast mode.
        counts: Option<Box<AccessCounts>>,
    },
    RecordEvent,
    /// `automatic`: inserted by automatic cross-stream synchronisation, not by the program.
    WaitEvent {
        automatic: bool,
    },
    SynchronizeStream,
    SynchronizeDevice,
    /// The host waited for an event (`Event::synchronize`, or a pinned buffer waiting for the
    /// copies into it before the host reads it).
    SynchronizeEvent,
}

impl OpKind {
    pub fn short(&self) -> String {
        match self {
            OpKind::Alloc { bytes, .. } => format!("alloc {bytes} B"),
            OpKind::Free { bytes, .. } => format!("free {bytes} B"),
            OpKind::Copy { dir, bytes, pinned, .. } => {
                let d = match dir {
                    CopyDir::HostToDevice => "HtoD",
                    CopyDir::DeviceToHost => "DtoH",
                    CopyDir::DeviceToDevice => "DtoD",
                };
                format!("memcpy {d} {bytes} B{}", if *pinned { " (pinned)" } else { "" })
            }
            OpKind::Memset { bytes, .. } => format!("memset {bytes} B"),
            OpKind::Launch { kernel, grid, block, .. } => {
                format!("launch {kernel}<<<({},{},{}), ({},{},{})>>>", grid[0], grid[1], grid[2], block[0], block[1], block[2])
            }
            OpKind::RecordEvent => "record event".into(),
            OpKind::WaitEvent { automatic } => if *automatic { "wait event (auto)" } else { "wait event" }.into(),
            OpKind::SynchronizeStream => "synchronize stream".into(),
            OpKind::SynchronizeDevice => "synchronize device".into(),
            OpKind::SynchronizeEvent => "synchronize event".into(),
        }
    }

    pub fn is_copy(&self) -> bool {
        matches!(self, OpKind::Copy { .. })
    }
    pub fn is_launch(&self) -> bool {
        matches!(self, OpKind::Launch { .. })
    }
}

pub use gpubook_emu::{GlobalAccesses, GlobalRequests, SharedAccesses, SharedRequests, ThreadAccesses, Writers};

/// A launch's memory traffic as the emulator's check mode counts it (crates/gpubook-emu/DESIGN.md,
/// "Access counts", says how): warp-level requests to global memory with the 32-byte sectors
/// they touch, shared-memory requests with their bank conflicts, atomics, and per-thread extremes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AccessCounts {
    /// CUDA threads that ran to the end.
    pub threads: u64,
    pub global: GlobalAccesses,
    pub shared: SharedAccesses,
    /// The most any one thread did of each kind.
    pub per_thread_max: ThreadAccesses,
    /// The least any one thread did of each kind.
    pub per_thread_min: ThreadAccesses,
    /// Global traffic per device buffer, in address order.
    pub buffers: Vec<BufferAccesses>,
}

/// The global traffic of one buffer in one launch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BufferAccesses {
    /// The allocation, when it is one this `Gpu` made and passed to the launch.
    pub buffer: Option<BufferId>,
    /// Its name in diagnostics (the kernel parameter's, unless the program named it).
    pub label: String,
    pub loads: GlobalRequests,
    pub stores: GlobalRequests,
    pub atomics: u64,
    /// Who wrote each element, when the emulator was asked to record it
    /// (`EmuConfig::writers`, check mode) and the launch stored to this buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writers: Option<Writers>,
}

impl AccessCounts {
    /// The emulator's counts, with buffers named by id: `allocations` maps an allocation's
    /// device address to its id.
    pub(crate) fn from_emulator(c: gpubook_emu::AccessCounts, allocations: &[(u64, BufferId)]) -> AccessCounts {
        let id_of = |addr: u64| allocations.iter().find(|(a, _)| *a == addr).map(|(_, id)| *id);
        let buffers = c
            .buffers
            .into_iter()
            .map(|b| BufferAccesses {
                buffer: id_of(b.addr),
                label: b.label,
                loads: b.loads,
                stores: b.stores,
                atomics: b.atomics,
                writers: b.writers,
            })
            .collect();
        AccessCounts {
            threads: c.threads,
            global: c.global,
            shared: c.shared,
            per_thread_max: c.per_thread_max,
            per_thread_min: c.per_thread_min,
            buffers,
        }
    }

    /// The entry of one buffer, by the name diagnostics give it.
    pub fn buffer(&self, label: &str) -> Option<&BufferAccesses> {
        self.buffers.iter().find(|b| b.label == label)
    }
}

/// One operation with its times.
#[derive(Debug, Clone, Serialize)]
pub struct TraceOp {
    pub index: usize,
    pub device: usize,
    pub stream: u32,
    pub kind: OpKind,
    pub start_us: f64,
    pub end_us: f64,
}

impl TraceOp {
    pub fn duration_us(&self) -> f64 {
        (self.end_us - self.start_us).max(0.0)
    }

    /// A launch's access counts (emulator, check mode), else None.
    pub fn access_counts(&self) -> Option<&AccessCounts> {
        match &self.kind {
            OpKind::Launch { counts, .. } => counts.as_deref(),
            _ => None,
        }
    }

    /// The kernel of a launch.
    pub fn kernel(&self) -> Option<&str> {
        match &self.kind {
            OpKind::Launch { kernel, .. } => Some(kernel),
            _ => None,
        }
    }
}

/// A snapshot of the trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    pub ops: Vec<TraceOp>,
}

/// A 64-bit digest of bytes, for telling whether data that left a function is data a copy
/// carried (not a cryptographic hash: it guards against mistakes, not forgeries).
pub fn digest(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(23) ^ w).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(23) ^ b as u64).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// The digest of a slice of device-representable values, as the trace records copies.
pub fn digest_of<T: DeviceRepr>(values: &[T]) -> u64 {
    // SAFETY: DeviceRepr types are plain data; the bytes are read only.
    digest(unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, std::mem::size_of_val(values)) })
}

/// What last wrote a buffer, as [`Trace::last_writer`] sees it.
#[derive(Debug, Clone, Copy)]
pub enum Writer<'a> {
    /// A kernel that took the buffer as a mutable argument.
    Launch(&'a TraceOp),
    /// A copy from the host into it.
    Upload(&'a TraceOp),
    /// A device-to-device copy into it.
    DeviceCopy(&'a TraceOp),
    /// A memset.
    Memset(&'a TraceOp),
    /// Nothing since it was allocated (or nothing the trace saw).
    Nothing,
}

impl Trace {
    /// What last wrote `buffer` before the op at position `before` in `ops`: a launch that took
    /// it as a mutable argument, a copy into it, a memset (the grader's own poison fill of a new
    /// allocation does not count).
    pub fn last_writer(&self, buffer: BufferId, before: usize) -> Writer<'_> {
        for op in self.ops[..before.min(self.ops.len())].iter().rev() {
            match &op.kind {
                OpKind::Launch { buffers, .. } if buffers.iter().any(|&(b, w)| b == buffer && w) => return Writer::Launch(op),
                OpKind::Copy { dst: Some(d), dir, .. } if *d == buffer => {
                    return if *dir == CopyDir::HostToDevice { Writer::Upload(op) } else { Writer::DeviceCopy(op) };
                }
                OpKind::Memset { buffer: b, value, .. } if *b == buffer && *value != 0xFF => return Writer::Memset(op),
                OpKind::Memset { buffer: b, .. } if *b == buffer => return Writer::Nothing,
                OpKind::Alloc { buffer: b, .. } if *b == buffer => return Writer::Nothing,
                _ => {}
            }
        }
        Writer::Nothing
    }

    /// Positions (in `ops`) of copies in direction `dir` whose host bytes had digest `d`.
    pub fn copies_with_digest(&self, dir: CopyDir, d: u64) -> Vec<usize> {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.kind, OpKind::Copy { dir: cd, digest: Some(x), .. } if cd == dir && x == d))
            .map(|(i, _)| i)
            .collect()
    }

    pub fn copies(&self) -> impl Iterator<Item = &TraceOp> {
        self.ops.iter().filter(|o| o.kind.is_copy())
    }
    pub fn launches(&self) -> impl Iterator<Item = &TraceOp> {
        self.ops.iter().filter(|o| o.kind.is_launch())
    }
    /// Bytes copied in one direction.
    pub fn bytes_copied(&self, dir: CopyDir) -> usize {
        self.ops
            .iter()
            .map(|o| match &o.kind {
                OpKind::Copy { dir: d, bytes, .. } if *d == dir => *bytes,
                _ => 0,
            })
            .sum()
    }
    /// Allocations with no matching free: (buffer, bytes, label).
    pub fn leaks(&self) -> Vec<(BufferId, usize, String)> {
        let freed: std::collections::HashSet<_> =
            self.ops.iter().filter_map(|o| if let OpKind::Free { buffer, .. } = o.kind { Some(buffer) } else { None }).collect();
        self.ops
            .iter()
            .filter_map(|o| match &o.kind {
                OpKind::Alloc { buffer, bytes, label } if !freed.contains(buffer) => Some((*buffer, *bytes, label.clone())),
                _ => None,
            })
            .collect()
    }
    /// Total time of the union of the intervals of the ops selected.
    pub fn busy_us(&self, select: impl Fn(&TraceOp) -> bool) -> f64 {
        union_length(&intervals(self, &select))
    }
    /// Time during which an op of `a` and an op of `b` both ran.
    pub fn overlap_us(&self, a: impl Fn(&TraceOp) -> bool, b: impl Fn(&TraceOp) -> bool) -> f64 {
        let ia = merge(intervals(self, &a));
        let ib = merge(intervals(self, &b));
        let (mut i, mut j, mut total) = (0, 0, 0.0);
        while i < ia.len() && j < ib.len() {
            let lo = ia[i].0.max(ib[j].0);
            let hi = ia[i].1.min(ib[j].1);
            if hi > lo {
                total += hi - lo;
            }
            if ia[i].1 < ib[j].1 { i += 1 } else { j += 1 }
        }
        total
    }
    /// First start to last end of the ops that take time.
    pub fn span_us(&self) -> f64 {
        let timed = self.ops.iter().filter(|o| o.kind.is_copy() || o.kind.is_launch() || matches!(o.kind, OpKind::Memset { .. }));
        let (lo, hi) = timed.fold((f64::MAX, f64::MIN), |(lo, hi), o| (lo.min(o.start_us), hi.max(o.end_us)));
        if hi > lo { hi - lo } else { 0.0 }
    }
}

fn intervals(t: &Trace, select: &dyn Fn(&TraceOp) -> bool) -> Vec<(f64, f64)> {
    t.ops.iter().filter(|o| select(o)).map(|o| (o.start_us, o.end_us)).collect()
}

fn merge(mut v: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn union_length(v: &[(f64, f64)]) -> f64 {
    merge(v.to_vec()).iter().map(|(s, e)| e - s).sum()
}

/// When an operation's times are known.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stamp {
    /// Bracketed by two events on its stream; resolved when the trace is read.
    Events(EventId, EventId),
    Known(f64, f64),
}

pub(crate) struct Pending {
    pub device: usize,
    pub stream: u32,
    pub kind: OpKind,
    pub stamp: Stamp,
}

/// The trace as it is being recorded.
#[derive(Default)]
pub(crate) struct TraceLog {
    pub ops: Vec<Pending>,
    pub enabled: bool,
}

impl TraceLog {
    /// Gives the latest copy in direction `dir` of `bytes` bytes from or into host address `host`
    /// that has no digest yet the digest of those bytes: a copy from or into pinned memory, once
    /// the host waits for the buffer (see `Pending`).
    pub fn set_digest_at(&mut self, dir: CopyDir, host: u64, bytes: usize, d: u64) {
        let latest = self.ops.iter_mut().rev().find(|p| {
            matches!(p.kind, OpKind::Copy { dir: pd, host: Some(h), bytes: b, digest: None, .. } if pd == dir && h == host && b == bytes)
        });
        if let Some(Pending { kind: OpKind::Copy { digest, .. }, .. }) = latest {
            *digest = Some(d);
        }
    }

    /// Gives the latest download from `buffer` on `stream` the digest of what arrived (known
    /// only once a synchronous copy has finished).
    pub fn set_download_digest(&mut self, stream: u32, buffer: BufferId, d: u64) {
        let latest =
            self.ops.iter_mut().rev().find(|p| {
                p.stream == stream && matches!(p.kind, OpKind::Copy { dir: CopyDir::DeviceToHost, src: Some(b), .. } if b == buffer)
            });
        if let Some(Pending { kind: OpKind::Copy { digest, .. }, .. }) = latest {
            *digest = Some(d);
        }
    }
}

pub(crate) fn host_mem_pinned(m: HostMem) -> bool {
    m == HostMem::Pinned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: OpKind, s: f64, e: f64) -> TraceOp {
        TraceOp { index: 0, device: 0, stream: 0, kind, start_us: s, end_us: e }
    }

    #[test]
    fn overlap_of_copies_and_launches() {
        let copy = OpKind::Copy { dir: CopyDir::HostToDevice, bytes: 4, pinned: true, src: None, dst: Some(1), digest: None, host: None };
        let launch = OpKind::Launch { kernel: "k".into(), grid: [1; 3], block: [1; 3], shared_mem_bytes: 0, buffers: vec![], counts: None };
        let t = Trace { ops: vec![op(copy.clone(), 0.0, 10.0), op(launch, 5.0, 20.0), op(copy, 15.0, 30.0)] };
        assert_eq!(t.overlap_us(|o| o.kind.is_copy(), |o| o.kind.is_launch()), 10.0);
        assert_eq!(t.busy_us(|o| o.kind.is_copy()), 25.0);
        assert_eq!(t.span_us(), 30.0);
    }

    #[test]
    fn the_last_writer_of_a_buffer() {
        let up = OpKind::Copy { dir: CopyDir::HostToDevice, bytes: 4, pinned: false, src: None, dst: Some(1), digest: Some(7), host: None };
        let launch = OpKind::Launch {
            kernel: "k".into(),
            grid: [1; 3],
            block: [1; 3],
            shared_mem_bytes: 0,
            buffers: vec![(1, false), (2, true)],
            counts: None,
        };
        let poison = OpKind::Memset { buffer: 2, bytes: 4, value: 0xFF };
        let t = Trace { ops: vec![op(poison, 0.0, 1.0), op(up, 1.0, 2.0), op(launch, 2.0, 3.0)] };
        assert!(matches!(t.last_writer(2, 3), Writer::Launch(_)));
        assert!(matches!(t.last_writer(2, 2), Writer::Nothing), "the grader's poison fill is no write");
        assert!(matches!(t.last_writer(1, 3), Writer::Upload(_)), "a read-only argument is not written");
        assert_eq!(t.copies_with_digest(CopyDir::HostToDevice, 7), [1]);
        assert_ne!(digest(&[1, 2, 3]), digest(&[1, 2, 4]));
        assert_ne!(digest(&[0; 8]), digest(&[0; 16]));
    }
}
