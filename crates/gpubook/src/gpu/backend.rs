//! The seam between the backend-neutral API and the two backends (cudarc, the CPU emulator).
//!
//! Backends see raw device addresses, stream ids and event ids; everything typed, traced or
//! checked (element types, kernel arguments, cross-stream ordering) lives above this line, so it
//! behaves the same on a GPU and on the emulator.

use super::error::Result;
use super::ids::{BufferId, EventId, HostMem, StreamId};
use super::info::DeviceInfo;
use super::module::KernelSource;
use super::occupancy::FunctionResources;
use super::trace::AccessCounts;
use gpubook_cudac::Finding;
use std::sync::Arc;

/// What a launch needs from the neutral layer.
pub(crate) struct LaunchRequest<'a> {
    pub function: &'a dyn BackendFunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    /// One entry per kernel parameter: its little-endian bytes (a device address or a scalar).
    pub args: &'a [Vec<u8>],
    /// Bytes of device memory the pointer arguments span (the emulator's cost model uses it).
    pub bytes_touched: u64,
    /// Of those, bytes in mapped host memory, which a kernel reaches over the bus.
    pub mapped_bytes: u64,
    /// The allocations the pointer arguments lie in: (start address, id), for naming buffers
    /// in access counts.
    pub allocations: &'a [(u64, BufferId)],
}

pub(crate) trait Backend: Send + Sync {
    fn info(&self) -> &DeviceInfo;
    /// Host time in microseconds on the trace's clock (wall clock on a GPU, the model's clock on
    /// the emulator).
    fn host_now_us(&self) -> f64;

    fn new_stream(&self) -> Result<StreamId>;
    fn destroy_stream(&self, stream: StreamId);
    fn synchronize_stream(&self, stream: StreamId) -> Result<()>;
    fn synchronize_device(&self) -> Result<()>;

    fn alloc(&self, stream: StreamId, bytes: usize, elem_size: usize, label: &str) -> Result<u64>;
    fn free(&self, stream: StreamId, addr: u64) -> Result<()>;
    /// Names a buffer in the backend's own messages (only the emulator has any).
    fn relabel(&self, _addr: u64, _label: &str) {}
    /// # Safety
    /// `src` must stay valid (and, for pinned memory, unchanged) until the copy completes.
    unsafe fn copy_htod(&self, stream: StreamId, dst: u64, src: *const u8, bytes: usize, mem: HostMem) -> Result<()>;
    /// # Safety
    /// `dst` must stay valid and unread until the copy completes.
    unsafe fn copy_dtoh(&self, stream: StreamId, dst: *mut u8, src: u64, bytes: usize, mem: HostMem) -> Result<()>;
    fn copy_dtod(&self, stream: StreamId, dst: u64, src: u64, bytes: usize) -> Result<()>;
    fn memset(&self, stream: StreamId, dst: u64, byte: u8, bytes: usize) -> Result<()>;

    fn load_module(&self, source: &KernelSource) -> Result<Arc<dyn BackendModule>>;
    /// Runs a kernel; the emulator's check mode also says what it did to memory.
    fn launch(&self, stream: StreamId, launch: &LaunchRequest<'_>) -> Result<Option<AccessCounts>>;

    /// Records a new event at the current end of `stream`.
    fn record_event(&self, stream: StreamId) -> Result<EventId>;
    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()>;
    fn synchronize_event(&self, event: EventId) -> Result<()>;
    /// Microseconds from the device's origin (its creation) to `event`; waits for the event.
    fn event_time_us(&self, event: EventId) -> Result<f64>;
    fn destroy_event(&self, event: EventId);

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
    /// # Safety
    /// `ptr` came from `alloc_pinned` with the same `bytes` and is no longer used.
    unsafe fn free_pinned(&self, ptr: *mut u8, bytes: usize);

    /// Page-locked host memory that kernels can address: (host pointer, device address).
    fn alloc_mapped(&self, bytes: usize, elem_size: usize, label: &str) -> Result<(*mut u8, u64)>;
    /// # Safety
    /// `host` and `dev` came from one `alloc_mapped` and are no longer used.
    unsafe fn free_mapped(&self, host: *mut u8, dev: u64);

    /// The backend's own objects, for learners who want to go below this API.
    fn as_any(&self) -> &dyn std::any::Any;
}

pub(crate) trait BackendModule: Send + Sync {
    fn function(&self, name: &str) -> Result<Arc<dyn BackendFunction>>;
    /// What the source and the compiler showed that is legal but most likely a bug, so far (a
    /// template instance compiled by `function` may add some).
    fn findings(&self) -> Vec<Finding>;
    /// A `__device__`/`__constant__` variable's address and size (`cuModuleGetGlobal`).
    fn global(&self, name: &str) -> Result<(u64, usize)>;
    /// Copies `data` into a variable from `global`; waits until done. On a GPU a variable is
    /// device memory and the backend's copies reach it; the emulator's live in its worker.
    fn write_global(&self, backend: &dyn Backend, stream: StreamId, addr: u64, data: &[u8]) -> Result<()> {
        // SAFETY: `data` outlives the copy: the stream is synchronised before returning.
        unsafe { backend.copy_htod(stream, addr, data.as_ptr(), data.len(), HostMem::Pageable) }?;
        backend.synchronize_stream(stream)
    }
    /// Copies a variable (or its first `out.len()` bytes) out, after the stream's work.
    fn read_global(&self, backend: &dyn Backend, stream: StreamId, addr: u64, out: &mut [u8]) -> Result<()> {
        backend.synchronize_stream(stream)?;
        // SAFETY: `out` outlives the copy: the stream is synchronised before returning.
        unsafe { backend.copy_dtoh(stream, out.as_mut_ptr(), addr, out.len(), HostMem::Pageable) }?;
        backend.synchronize_stream(stream)
    }
}

pub(crate) trait BackendFunction: Send + Sync {
    fn as_any(&self) -> &dyn std::any::Any;
    /// Registers, static shared memory and so on, as compiled (`cuFuncGetAttribute`).
    fn resources(&self) -> Result<FunctionResources>;
    /// Blocks of `block` threads with `dynamic_shared` bytes of dynamic shared memory one SM
    /// holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    fn max_active_blocks_per_sm(&self, block: u32, dynamic_shared: u32) -> Result<u32>;
    /// The device's opt-in maximum of shared memory per block.
    fn max_shared_optin(&self) -> u32;
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` (checked against `max_shared_optin` first).
    fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> Result<()>;
}
