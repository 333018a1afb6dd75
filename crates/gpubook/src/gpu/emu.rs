//! The CPU emulator backend: crate `gpubook-emu` runs the kernels; this file adds streams and
//! events on a timeline model, so that overlap can be measured and drawn without a GPU.
//!
//! The emulator executes every operation when it is issued, in program order (a valid order
//! for any correctly synchronised program; `ordering.rs` reports the others). Times come from a
//! documented cost model of a discrete GPU on PCIe 4.0, not from the CPU's clock:
//! - the host spends `ISSUE_US` issuing each operation; pageable copies block it until done;
//! - a copy engine per direction (so an upload, a download and a kernel can all overlap), a
//!   third for device-to-device copies (GPUs have several copy engines: a copy that stands for
//!   communication runs beside a kernel, as in the DualPipe chapter), and one compute engine
//!   (kernels run one at a time, as large kernels do on a real GPU);
//! - an operation starts when its stream, its engine and the host are all ready.

use super::backend::{Backend, BackendFunction, BackendModule, LaunchRequest};
use super::error::{GpuError, Result};
use super::ids::{EventId, HostMem, StreamId};
use super::info::{BackendKind, DeviceInfo};
use super::limits::{MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK};
use super::module::KernelSource;
use super::occupancy::{BlockResources, FunctionResources, SmLimits, limits};
use super::trace::AccessCounts;
use crate::sync::lock;
use gpubook_cudac::{Finding, KernelLookupError, find_kernel};
use gpubook_emu::{EmuConfig, EmuDevice, EmuError, EmuModule, LaunchSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The cost model's constants: times in microseconds, bandwidths in bytes per microsecond.
pub mod model {
    /// Host time to issue one operation.
    pub const ISSUE_US: f64 = 2.0;
    /// Fixed cost of a kernel launch on the device.
    pub const LAUNCH_US: f64 = 3.0;
    /// Fixed cost of a copy.
    pub const COPY_US: f64 = 1.5;
    /// PCIe 4.0 x16 with pinned memory, bytes per microsecond (25 GB/s).
    pub const PCIE_PINNED: f64 = 25_000.0;
    /// Pageable memory is staged through a driver buffer (12 GB/s).
    pub const PCIE_PAGEABLE: f64 = 12_000.0;
    /// Device memory bandwidth, bytes read + written per microsecond (900 GB/s).
    pub const DRAM: f64 = 900_000.0;
}

/// Compute capability 8.0's opt-in shared memory per block (163 KiB).
const SHARED_OPTIN_8_0: u32 = 163 << 10;

const DEVICES_VAR: &str = "GPUBOOK_EMU_DEVICES";

/// Emulated devices offered (`GPUBOOK_EMU_DEVICES`, default 2, so multi-device chapters run).
pub(crate) fn device_count() -> usize {
    std::env::var(DEVICES_VAR).ok().and_then(|v| v.parse().ok()).unwrap_or(2)
}

pub(crate) fn new_backend(ordinal: usize) -> Result<Box<dyn Backend>> {
    new_backend_with(ordinal, EmuConfig::from_env())
}

pub(crate) fn new_backend_with(ordinal: usize, config: EmuConfig) -> Result<Box<dyn Backend>> {
    let count = device_count();
    if ordinal >= count {
        return Err(GpuError::Unavailable {
            backend: "emulator",
            reason: format!("device {ordinal} asked for, but the emulator offers {count}"),
            fix: format!("set {DEVICES_VAR} to the number of emulated devices you need"),
        });
    }
    let dev = EmuDevice::new(ordinal, config).map_err(emu_error)?;
    let e = dev.info();
    let info = DeviceInfo {
        backend: BackendKind::Emulator,
        ordinal,
        name: e.name.clone(),
        compute_capability: (e.compute_capability.0 as i32, e.compute_capability.1 as i32),
        multiprocessors: e.sm_count,
        total_memory: e.total_memory,
        max_threads_per_block: MAX_THREADS_PER_BLOCK,
        max_block_dim: MAX_BLOCK_DIM,
        max_grid_dim: MAX_GRID_DIM,
        max_shared_mem_per_block: SHARED_MEM_PER_BLOCK,
        // 48 KiB in all unless a kernel opts in to more dynamic shared memory, up to compute
        // capability 8.0's 163 KiB.
        max_shared_mem_per_block_optin: SHARED_OPTIN_8_0,
        warp_size: e.warp_size,
        // Compute capability 8.0's (what the emulator claims), with the emulated SM's own
        // threads, blocks and shared memory.
        sm: SmLimits {
            max_threads: e.max_threads_per_sm,
            max_blocks: e.max_blocks_per_sm,
            shared_memory: e.shared_memory_per_sm,
            max_shared_memory_per_block: SHARED_OPTIN_8_0,
            ..SmLimits::A100
        },
        driver_version: None,
        nvrtc_version: None,
        detail: format!(
            "{} mode (GPUBOOK_EMU_MODE=check|fast), kernels built with {}, cache {}",
            e.mode.as_str(),
            dev.config().cxx.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "c++".into()),
            dev.config().cache_dir.display()
        ),
    };
    Ok(Box::new(EmuBackend { dev: Arc::new(dev), info, timeline: Mutex::default() }))
}

pub(crate) fn device_of(b: &dyn Backend) -> Option<&EmuDevice> {
    b.as_any().downcast_ref::<EmuBackend>().map(|e| &*e.dev)
}

/// Converts the emulator's errors into the API's.
fn emu_error(e: EmuError) -> GpuError {
    match e {
        EmuError::Compile { file, line, message, log } => GpuError::Compile { file, line, message, log },
        EmuError::Unsupported { feature, file, line } => {
            GpuError::Unsupported { backend: "the gpubook CPU emulator", feature, file, line: Some(line) }
        }
        EmuError::Kernel(d) => GpuError::Kernel(Box::new(d)),
        EmuError::NoCompiler(reason) => GpuError::Unavailable {
            backend: "emulator",
            reason: format!("no C++ compiler: {reason}"),
            fix: "install g++ (apt-get install g++) or set CXX".into(),
        },
        EmuError::Memory(m) => GpuError::Size(m),
        EmuError::Worker(m) => GpuError::Driver { call: "emulator worker", message: m },
        EmuError::Io { context, source } => GpuError::Io { context, source },
    }
}

struct EmuBackend {
    dev: Arc<EmuDevice>,
    info: DeviceInfo,
    timeline: Mutex<Timeline>,
}

/// When each stream, engine and the host are next free, in modelled microseconds.
#[derive(Default)]
struct Timeline {
    host: f64,
    streams: HashMap<StreamId, f64>,
    engines: HashMap<Engine, f64>,
    events: HashMap<EventId, f64>,
    next_stream: StreamId,
    next_event: EventId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Engine {
    CopyUp,
    CopyDown,
    CopyDevice,
    Compute,
    /// Allocations and frees take no engine time.
    None,
}

impl Timeline {
    /// Schedules `duration` of work on `stream` and `engine`; returns its end.
    fn run(&mut self, stream: StreamId, engine: Engine, duration: f64, blocks_host: bool) -> f64 {
        self.host += model::ISSUE_US;
        let tail = self.streams.get(&stream).copied().unwrap_or(0.0);
        let free = if engine == Engine::None { 0.0 } else { self.engines.get(&engine).copied().unwrap_or(0.0) };
        let start = tail.max(free).max(self.host);
        let end = start + duration;
        self.streams.insert(stream, end);
        if engine != Engine::None {
            self.engines.insert(engine, end);
        }
        if blocks_host {
            self.host = self.host.max(end);
        }
        end
    }

    fn tail(&self, stream: StreamId) -> f64 {
        self.streams.get(&stream).copied().unwrap_or(0.0).max(self.host)
    }
}

fn copy_us(bytes: usize, mem: HostMem) -> f64 {
    let bw = if mem == HostMem::Pinned { model::PCIE_PINNED } else { model::PCIE_PAGEABLE };
    model::COPY_US + bytes as f64 / bw
}

impl EmuBackend {
    fn tl(&self) -> std::sync::MutexGuard<'_, Timeline> {
        lock(&self.timeline)
    }
}

impl Backend for EmuBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn host_now_us(&self) -> f64 {
        self.tl().host
    }

    fn new_stream(&self) -> Result<StreamId> {
        let mut t = self.tl();
        t.next_stream += 1;
        Ok(t.next_stream)
    }

    fn destroy_stream(&self, _stream: StreamId) {}

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        let mut t = self.tl();
        t.host = t.tail(stream);
        Ok(())
    }

    fn synchronize_device(&self) -> Result<()> {
        let mut t = self.tl();
        let all = t.streams.values().fold(t.host, |a, &b| a.max(b));
        t.host = all;
        Ok(())
    }

    fn alloc(&self, stream: StreamId, bytes: usize, elem_size: usize, label: &str) -> Result<u64> {
        let addr = self.dev.alloc(bytes, elem_size.max(1), label).map_err(emu_error)?;
        self.tl().run(stream, Engine::None, 0.0, false);
        Ok(addr)
    }

    fn relabel(&self, addr: u64, label: &str) {
        // The buffer exists (a DeviceSlice names it), so this cannot fail in practice; a failure
        // would only cost the nicer name.
        let _ = self.dev.relabel(addr, label);
    }

    fn free(&self, stream: StreamId, addr: u64) -> Result<()> {
        self.dev.free(addr).map_err(emu_error)?;
        self.tl().run(stream, Engine::None, 0.0, false);
        Ok(())
    }

    unsafe fn copy_htod(&self, stream: StreamId, dst: u64, src: *const u8, bytes: usize, mem: HostMem) -> Result<()> {
        // SAFETY: the caller passes `bytes` readable bytes at `src` (Backend::copy_htod), and
        // the emulator copies them before returning.
        let src = unsafe { std::slice::from_raw_parts(src, bytes) };
        self.dev.write(dst, src).map_err(emu_error)?;
        self.tl().run(stream, Engine::CopyUp, copy_us(bytes, mem), mem == HostMem::Pageable);
        Ok(())
    }

    unsafe fn copy_dtoh(&self, stream: StreamId, dst: *mut u8, src: u64, bytes: usize, mem: HostMem) -> Result<()> {
        // SAFETY: the caller passes `bytes` writable bytes at `dst` that nothing else touches
        // until the copy completes (Backend::copy_dtoh); the emulator copies before returning.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
        self.dev.read(src, dst).map_err(emu_error)?;
        self.tl().run(stream, Engine::CopyDown, copy_us(bytes, mem), mem == HostMem::Pageable);
        Ok(())
    }

    fn copy_dtod(&self, stream: StreamId, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.dev.copy(dst, src, bytes).map_err(emu_error)?;
        self.tl().run(stream, Engine::CopyDevice, model::COPY_US + 2.0 * bytes as f64 / model::DRAM, false);
        Ok(())
    }

    fn memset(&self, stream: StreamId, dst: u64, byte: u8, bytes: usize) -> Result<()> {
        self.dev.fill(dst, byte, bytes).map_err(emu_error)?;
        self.tl().run(stream, Engine::Compute, model::COPY_US + bytes as f64 / model::DRAM, false);
        Ok(())
    }

    fn load_module(&self, source: &KernelSource) -> Result<Arc<dyn BackendModule>> {
        let src = gpubook_emu::KernelSource {
            path: super::module::display_path(&source.path).into(),
            text: source.text.clone(),
            include_dirs: source.include_dirs.clone(),
            kernels: source.signatures.clone(), // parsed once, by Source::read
        };
        let module = self.dev.load_module(&src).map_err(emu_error)?;
        Ok(Arc::new(EmuKernels(module, self.info.sm, self.dev.clone())))
    }

    fn launch(&self, stream: StreamId, l: &LaunchRequest<'_>) -> Result<Option<AccessCounts>> {
        let f = l.function.as_any().downcast_ref::<EmuFunction>().expect("an emulator function on the emulator");
        let spec = LaunchSpec { grid: l.grid, block: l.block, shared_mem_bytes: l.shared_mem_bytes, mode: None };
        let stats = self.dev.launch(&f.module, &f.name, &spec, l.args).map_err(emu_error)?;
        // Every byte the pointer arguments span, read once and written once: a kernel that
        // streams through its buffers, which is what the early chapters' kernels do. Bytes in
        // mapped host memory cross the bus instead.
        let device_bytes = l.bytes_touched.saturating_sub(l.mapped_bytes) as f64;
        let us = model::LAUNCH_US + 2.0 * device_bytes / model::DRAM + l.mapped_bytes as f64 / model::PCIE_PINNED;
        self.tl().run(stream, Engine::Compute, us, false);
        Ok(stats.counts.map(|c| AccessCounts::from_emulator(c, l.allocations)))
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        let mut t = self.tl();
        let at = t.tail(stream);
        t.next_event += 1;
        let id = t.next_event;
        t.events.insert(id, at);
        Ok(id)
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        let mut t = self.tl();
        let at = t.events.get(&event).copied().unwrap_or(0.0);
        let tail = t.streams.entry(stream).or_insert(0.0);
        *tail = tail.max(at);
        Ok(())
    }

    fn synchronize_event(&self, event: EventId) -> Result<()> {
        let mut t = self.tl();
        let at = t.events.get(&event).copied().unwrap_or(0.0);
        t.host = t.host.max(at);
        Ok(())
    }

    fn event_time_us(&self, event: EventId) -> Result<f64> {
        Ok(self.tl().events.get(&event).copied().unwrap_or(0.0))
    }

    fn destroy_event(&self, event: EventId) {
        self.tl().events.remove(&event);
    }

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        let layout = pinned_layout(bytes);
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(GpuError::OutOfMemory { requested: bytes, detail: "host memory for a pinned buffer".into() });
        }
        Ok(p)
    }

    unsafe fn free_pinned(&self, ptr: *mut u8, bytes: usize) {
        // SAFETY: `ptr` came from `alloc_pinned` with the same `bytes`, so the same layout, and
        // is no longer used: the caller's contract.
        unsafe { std::alloc::dealloc(ptr, pinned_layout(bytes)) };
    }

    /// Mapped host memory lives in the device arena, which this process maps at the same
    /// address as the worker: one pointer for host and kernels, and the emulator's bounds checks
    /// cover it like any device buffer.
    fn alloc_mapped(&self, bytes: usize, elem_size: usize, label: &str) -> Result<(*mut u8, u64)> {
        let addr = self.dev.alloc(bytes, elem_size.max(1), label).map_err(emu_error)?;
        // Zeroed through the device, so the never-written check knows the host holds data here
        // (later host writes go straight to the memory, which the worker cannot see).
        self.dev.fill(addr, 0, bytes).map_err(emu_error)?;
        Ok((addr as *mut u8, addr))
    }

    unsafe fn free_mapped(&self, _host: *mut u8, dev: u64) {
        let _ = self.dev.free(dev);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Emulated pinned memory is ordinary memory, page-aligned like the real thing.
fn pinned_layout(bytes: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(bytes.max(1), 4096).expect("a valid layout")
}

/// A module, with the device that compiles its template instantiations and the limits of the SM
/// its functions run on (for occupancy questions).
struct EmuKernels(Arc<EmuModule>, SmLimits, Arc<EmuDevice>);

impl BackendModule for EmuKernels {
    fn findings(&self) -> Vec<Finding> {
        self.0.findings()
    }

    fn function(&self, name: &str) -> Result<Arc<dyn BackendFunction>> {
        match find_kernel(self.0.kernels(), name) {
            Err(KernelLookupError::NotFound { .. }) => {
                return Err(GpuError::KernelNotFound {
                    name: name.into(),
                    file: self.0.path().to_path_buf(),
                    available: self.0.kernels().iter().map(|k| k.name.clone()).collect::<Vec<_>>().join(", "),
                });
            }
            Err(e) => return Err(GpuError::KernelName { file: self.0.path().to_path_buf(), message: e.to_string() }),
            Ok(_) => {}
        }
        // Compiles a template instantiation now, as NVRTC does on a GPU.
        self.2.load_kernel(&self.0, name).map_err(emu_error)?;
        Ok(Arc::new(EmuFunction { module: self.0.clone(), name: name.into(), sm: self.1 }))
    }

    fn global(&self, name: &str) -> Result<(u64, usize)> {
        self.2.global(&self.0, name).map_err(emu_error)
    }

    /// The emulator runs every operation when it is issued, so nothing earlier is pending.
    fn write_global(&self, _b: &dyn Backend, _s: StreamId, addr: u64, data: &[u8]) -> Result<()> {
        self.2.write_global(&self.0, addr, data).map_err(emu_error)
    }

    fn read_global(&self, _b: &dyn Backend, _s: StreamId, addr: u64, out: &mut [u8]) -> Result<()> {
        self.2.read_global(&self.0, addr, out).map_err(emu_error)
    }
}

struct EmuFunction {
    module: Arc<EmuModule>,
    name: String,
    sm: SmLimits,
}

impl BackendFunction for EmuFunction {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// The emulator allocates no registers, and a kernel's static `__shared__` arrays are sized
    /// only when its blocks run: neither is known here.
    fn resources(&self) -> Result<FunctionResources> {
        Ok(FunctionResources {
            registers_per_thread: None,
            static_shared_bytes: None,
            local_bytes_per_thread: None,
            max_threads_per_block: self.sm.max_threads_per_block,
        })
    }

    fn max_shared_optin(&self) -> u32 {
        SHARED_OPTIN_8_0
    }

    /// The worker gives a block the dynamic shared memory a launch asks for; the opt-in is
    /// checked above the backends (`check_config`), as the driver checks it on a GPU.
    fn set_max_dynamic_shared_bytes(&self, _bytes: u32) -> Result<()> {
        Ok(())
    }

    /// The occupancy calculation on the emulated SM's limits, for the dynamic shared memory
    /// given (registers and static shared memory are not known: see `resources`).
    fn max_active_blocks_per_sm(&self, block: u32, dynamic_shared: u32) -> Result<u32> {
        let b = BlockResources { threads: block, registers_per_thread: 0, shared_bytes: dynamic_shared };
        Ok(limits(&self.sm, &b).resident())
    }
}
