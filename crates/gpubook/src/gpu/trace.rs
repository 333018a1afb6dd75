//! The record of everything a `Gpu` did: allocations, frees, copies (direction, bytes, pinned or
//! not), memsets, launches (with their configuration), event records and waits, synchronisation.
//! Times come from CUDA events on a GPU and from the emulator's timeline model on a CPU, in
//! microseconds since the device was created. Graders and figures read it.

use super::ids::{BufferId, EventId, HostMem};
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
    },
    RecordEvent,
    /// `automatic`: inserted by automatic cross-stream synchronisation, not by the program.
    WaitEvent {
        automatic: bool,
    },
    SynchronizeStream,
    SynchronizeDevice,
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
        }
    }

    pub fn is_copy(&self) -> bool {
        matches!(self, OpKind::Copy { .. })
    }
    pub fn is_launch(&self) -> bool {
        matches!(self, OpKind::Launch { .. })
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
}

/// A snapshot of the trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    pub ops: Vec<TraceOp>,
}

impl Trace {
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
        let copy = OpKind::Copy { dir: CopyDir::HostToDevice, bytes: 4, pinned: true, src: None, dst: Some(1) };
        let launch = OpKind::Launch { kernel: "k".into(), grid: [1; 3], block: [1; 3], shared_mem_bytes: 0, buffers: vec![] };
        let t = Trace { ops: vec![op(copy.clone(), 0.0, 10.0), op(launch, 5.0, 20.0), op(copy, 15.0, 30.0)] };
        assert_eq!(t.overlap_us(|o| o.kind.is_copy(), |o| o.kind.is_launch()), 10.0);
        assert_eq!(t.busy_us(|o| o.kind.is_copy()), 25.0);
        assert_eq!(t.span_us(), 30.0);
    }
}
