//! `Gpu`: one device and everything recorded about it (cudarc's `CudaContext`).

use super::backend::Backend;
use super::error::{GpuError, Result};
use super::ids::{BufferId, EventId, StreamId};
use super::info::{BackendKind, DeviceInfo};
use super::ordering::{Access, Ordering};
use super::trace::{OpKind, Pending, Stamp, Trace, TraceLog, TraceOp};
use super::{cuda, emu, select};
use crate::sync::lock;
use gpubook_cudac::Finding;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};

/// One device: a CUDA GPU or an emulated one. Cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

pub struct GpuInner {
    pub(crate) backend: Box<dyn Backend>,
    pub(crate) state: Mutex<State>,
    pub(crate) auto_sync: AtomicBool,
    pub(crate) poison: AtomicBool,
    /// Record a digest of the host bytes of each host↔device copy (`OpKind::Copy::digest`).
    pub(crate) digests: AtomicBool,
    pub(crate) next_buffer: AtomicU64,
    /// Kernel files read as other text: (path suffix, text), see [`Gpu::read_kernel_file_as`].
    pub(crate) kernel_files: Mutex<Vec<(String, String)>>,
    /// What the compilers found in the modules this device loaded, each once, in order.
    findings: Mutex<Vec<Finding>>,
}

impl GpuInner {
    /// Keeps each new finding of a module this device built, saying it once on stderr.
    pub(crate) fn keep_findings(&self, found: Vec<Finding>) {
        let mut kept = lock(&self.findings);
        for f in found {
            if !kept.contains(&f) {
                eprintln!("gpubook: warning: {}", f.located());
                kept.push(f);
            }
        }
    }
}

pub(crate) struct State {
    pub order: Ordering,
    pub trace: TraceLog,
    /// Events the trace or ordering no longer needs, once they are past.
    pub spare_events: Vec<EventId>,
}

/// Resolve and recycle trace events past this many pending operations.
const TRACE_COMPACT_AT: usize = 1 << 14;

impl Gpu {
    /// Device 0 on the backend `GPUBOOK_BACKEND` asks for (`cuda` or `emu`); when unset, CUDA if
    /// a device answers, else the CPU emulator.
    pub fn new() -> Result<Gpu> {
        Gpu::with_ordinal(0)
    }

    /// Device `ordinal` on the backend [`resolve_backend`](super::resolve_backend) picks.
    pub fn with_ordinal(ordinal: usize) -> Result<Gpu> {
        Ok(Gpu::from_backend(select::open_backend(ordinal)?))
    }

    /// An emulated device with explicit settings (mode, watchdog, threads), whatever
    /// `GPUBOOK_BACKEND` says: benchmarks use the fast mode, diagnostics tests the check mode.
    pub fn emulated(ordinal: usize, config: gpubook_emu::EmuConfig) -> Result<Gpu> {
        Ok(Gpu::from_backend(emu::new_backend_with(ordinal, config)?))
    }

    /// How many devices the chosen backend offers.
    pub fn device_count() -> Result<usize> {
        select::device_count()
    }

    pub(crate) fn from_backend(backend: Box<dyn Backend>) -> Gpu {
        let state = State { order: Ordering::default(), trace: TraceLog { ops: Vec::new(), enabled: true }, spare_events: Vec::new() };
        Gpu {
            inner: Arc::new(GpuInner {
                backend,
                state: Mutex::new(state),
                auto_sync: AtomicBool::new(true),
                poison: AtomicBool::new(false),
                digests: AtomicBool::new(false),
                next_buffer: AtomicU64::new(1),
                kernel_files: Mutex::new(Vec::new()),
                findings: Mutex::new(Vec::new()),
            }),
        }
    }

    pub fn info(&self) -> &DeviceInfo {
        self.inner.backend.info()
    }

    pub fn backend(&self) -> BackendKind {
        self.info().backend
    }

    pub fn ordinal(&self) -> usize {
        self.info().ordinal
    }

    /// Whether `other` is a handle to this same device object (clones of one `Gpu` are).
    pub fn is_same_device(&self, other: &Gpu) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Waits for all work on every stream (`cudaDeviceSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        let start = self.inner.backend.host_now_us();
        self.inner.backend.synchronize_device()?;
        let end = self.inner.backend.host_now_us();
        let mut st = lock(&self.inner.state);
        st.order.host_synchronized_device();
        st.push(self.ordinal(), 0, OpKind::SynchronizeDevice, Stamp::Known(start, end));
        Ok(())
    }

    /// What the compilers found, in every module this device has loaded, that is legal but most
    /// likely a bug (overlapping `extern __shared__` arrays, a local read before anything was
    /// stored to it), each once. Graders add those of an exercise's files to a failure.
    pub fn compiler_findings(&self) -> Vec<Finding> {
        lock(&self.inner.findings).clone()
    }

    /// From now on, a kernel file whose path ends with `suffix` (whole components:
    /// `"ch03/vector_add.cu"`) loads as `text` on this device: the wrong-answer tests run a
    /// solution's host code with a mutation of its kernel this way. The latest call for a path
    /// wins.
    pub fn read_kernel_file_as(&self, suffix: &str, text: impl Into<String>) {
        lock(&self.inner.kernel_files).push((suffix.to_string(), text.into()));
    }

    /// Turns automatic cross-stream synchronisation on (the default) or off. Off, the program
    /// must order streams itself with events; an unordered use of a buffer is a `Hazard` error.
    pub fn set_auto_sync(&self, on: bool) {
        self.inner.auto_sync.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn auto_sync(&self) -> bool {
        self.inner.auto_sync.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Fills every new allocation with 0xFF bytes (a NaN for floats, -1 for signed integers), on
    /// a GPU as on the emulator (which always does), so output a kernel never wrote shows.
    /// Graders turn it on.
    pub fn set_poison(&self, on: bool) {
        self.inner.poison.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Records a digest of the host bytes of every host↔device copy in the trace, so a grader can
    /// tell whether what a function returned is what came back from the device (and what a
    /// kernel wrote there) rather than something the host computed. Graders turn it on.
    pub fn set_content_digests(&self, on: bool) {
        self.inner.digests.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether operations are being traced.
    pub fn tracing(&self) -> bool {
        lock(&self.inner.state).trace.enabled
    }

    /// Turns the trace on (the default) or off (benchmarks that issue many small operations).
    pub fn set_tracing(&self, on: bool) {
        lock(&self.inner.state).trace.enabled = on;
    }

    /// Everything recorded since creation or the last `clear_trace`, with times. Waits for the
    /// operations to finish, since their times come from events.
    pub fn trace(&self) -> Result<Trace> {
        self.inner.resolve_trace(usize::MAX)?;
        let st = lock(&self.inner.state);
        let ops = st
            .trace
            .ops
            .iter()
            .enumerate()
            .map(|(index, p)| {
                let (start_us, end_us) = match p.stamp {
                    Stamp::Known(s, e) => (s, e),
                    Stamp::Events(..) => (f64::NAN, f64::NAN),
                };
                TraceOp { index, device: p.device, stream: p.stream, kind: p.kind.clone(), start_us, end_us }
            })
            .collect();
        Ok(Trace { ops })
    }

    pub fn clear_trace(&self) -> Result<()> {
        self.inner.resolve_trace(usize::MAX)?;
        lock(&self.inner.state).trace.ops.clear();
        Ok(())
    }

    /// The cudarc context underneath, when this is a CUDA device.
    pub fn cuda(&self) -> Option<&Arc<cudarc::driver::CudaContext>> {
        self.inner.backend.as_any().downcast_ref::<cuda::CudaBackend>().map(|b| b.context())
    }

    /// The emulated device underneath, when this is the emulator.
    pub fn emulator(&self) -> Option<&gpubook_emu::EmuDevice> {
        emu::device_of(self.inner.backend.as_ref())
    }
}

impl State {
    pub(crate) fn push(&mut self, device: usize, stream: StreamId, kind: OpKind, stamp: Stamp) {
        if self.trace.enabled {
            self.trace.ops.push(Pending { device, stream, kind, stamp });
        } else if let Stamp::Events(s, _) = stamp {
            self.spare_events.push(s);
        }
    }
}

impl GpuInner {
    pub(crate) fn new_buffer_id(&self) -> BufferId {
        self.next_buffer.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Issues one stream-ordered operation: checks (or establishes) its ordering with other
    /// streams, brackets it with events for the trace, and records it.
    pub(crate) fn run_op(
        &self,
        stream: StreamId,
        kind: OpKind,
        what: &str,
        accesses: &[Access],
        op: impl FnOnce(&dyn Backend) -> Result<()>,
    ) -> Result<EventId> {
        let auto = self.auto_sync.load(std::sync::atomic::Ordering::SeqCst);
        self.run_op_with(stream, kind, what, accesses, auto, op)
    }

    pub(crate) fn run_op_with(
        &self,
        stream: StreamId,
        kind: OpKind,
        what: &str,
        accesses: &[Access],
        auto: bool,
        op: impl FnOnce(&dyn Backend) -> Result<()>,
    ) -> Result<EventId> {
        self.run_op_recording(stream, what, accesses, auto, |b| op(b).map(|()| kind))
    }

    /// `run_op_with` for an operation whose trace record depends on how it went (a launch's
    /// access counts): `op` returns the record.
    pub(crate) fn run_op_recording(
        &self,
        stream: StreamId,
        what: &str,
        accesses: &[Access],
        auto: bool,
        op: impl FnOnce(&dyn Backend) -> Result<OpKind>,
    ) -> Result<EventId> {
        let b = self.backend.as_ref();
        let device = b.info().ordinal;
        let mut st = lock(&self.state);
        let waits = st.order.before(stream, what, accesses, auto).map_err(GpuError::Hazard)?;
        for w in waits {
            b.wait_event(stream, w.event)?;
            let now = b.host_now_us();
            st.push(device, stream, OpKind::WaitEvent { automatic: true }, Stamp::Known(now, now));
        }
        let start = b.record_event(stream)?;
        let kind = match op(b) {
            Ok(kind) => kind,
            Err(e) => {
                b.destroy_event(start);
                return Err(e);
            }
        };
        let end = b.record_event(stream)?;
        st.order.after(stream, what, accesses, end);
        st.push(device, stream, kind, Stamp::Events(start, end));
        let pending = st.trace.ops.len() + st.spare_events.len();
        drop(st);
        if pending > TRACE_COMPACT_AT {
            self.resolve_trace(TRACE_COMPACT_AT / 2)?;
        }
        Ok(end)
    }

    /// Turns the event stamps of the oldest `limit` operations into times and recycles the
    /// events nothing else needs.
    pub(crate) fn resolve_trace(&self, limit: usize) -> Result<()> {
        let b = self.backend.as_ref();
        let mut st = lock(&self.state);
        let mut done = Vec::new();
        for p in st.trace.ops.iter_mut().take(limit) {
            if let Stamp::Events(s, e) = p.stamp {
                p.stamp = Stamp::Known(b.event_time_us(s)?, b.event_time_us(e)?);
                done.push(s);
                done.push(e);
            }
        }
        let spare = std::mem::take(&mut st.spare_events);
        done.extend(spare);
        let live: HashSet<EventId> = st.order.live_events().collect();
        for e in done {
            if live.contains(&e) {
                st.spare_events.push(e);
            } else {
                b.destroy_event(e);
            }
        }
        if st.spare_events.len() > TRACE_COMPACT_AT {
            // Still referenced by ordering: wait for them so the next pass can let them go.
            let sync = b.synchronize_device();
            st.order.host_synchronized_device();
            sync?;
        }
        Ok(())
    }

    /// Blocks the host until event `e`, recorded on `stream`, is reached (`cudaEventSynchronize`);
    /// the trace shows the wait, as it shows a stream's or the device's.
    pub(crate) fn host_wait_event(&self, stream: StreamId, e: EventId) -> Result<()> {
        let start = self.backend.host_now_us();
        self.backend.synchronize_event(e)?;
        let end = self.backend.host_now_us();
        let mut st = lock(&self.state);
        st.order.host_synchronized_event(e);
        st.push(self.backend.info().ordinal, stream, OpKind::SynchronizeEvent, Stamp::Known(start, end));
        Ok(())
    }

    pub(crate) fn relabel(&self, buffer: BufferId, addr: u64, label: &str) {
        self.backend.relabel(addr, label);
        let mut st = lock(&self.state);
        for p in st.trace.ops.iter_mut() {
            if let OpKind::Alloc { buffer: b, label: l, .. } = &mut p.kind
                && *b == buffer
            {
                *l = label.to_string();
            }
        }
    }

    /// Frees a buffer in order on its stream. Errors have nowhere to go from `Drop`; the trace
    /// (a missing Free) and the device keep the evidence.
    pub(crate) fn free_buffer(&self, buffer: BufferId, addr: u64, stream: StreamId, bytes: usize) {
        let access = [Access { buffer, start: 0, end: bytes, write: true, label: format!("buffer #{buffer}") }];
        // A free always waits for other streams' use of the buffer (as cudaFreeAsync users must
        // arrange): Drop has no way to report a hazard.
        let r = self.run_op_with(stream, OpKind::Free { buffer, bytes }, "free", &access, true, |b| b.free(stream, addr));
        if r.is_ok() {
            lock(&self.state).order.forget_buffer(buffer);
        }
    }
}
