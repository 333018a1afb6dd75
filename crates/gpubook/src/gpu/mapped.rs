//! Mapped pinned host memory: page-locked host memory that kernels read and write directly,
//! over the bus, with no copy (`cudaHostAlloc(.., cudaHostAllocMapped)` and
//! `cudaHostGetDevicePointer`). Right for small things the host must see as soon as the device
//! writes them (a count, a flag, a status word); wrong for data a kernel reads more than once,
//! since every access crosses PCIe.
//!
//! On the emulator the buffer lives inside the device arena, which this process maps at the same
//! address, so one pointer serves host and kernels alike, as with CUDA's unified addressing.
//!
//! The host and the device share the memory with no copy to order them, so the host must wait
//! for the device work that uses it before it reads (or writes) it. `as_slice` checks that, as the
//! cross-stream check does: with automatic synchronisation it waits, without it a missing wait is
//! a `Hazard` that names the operation.

use super::context::{Gpu, GpuInner};
use super::error::{GpuError, Result};
use super::ids::{BufferId, Sealed};
use super::memory::{DevicePtr, DevicePtrMut, RawRef};
use super::repr::DeviceRepr;
use crate::sync::lock;
use std::sync::Arc;

/// `len` values of `T` in mapped pinned host memory (see the module docs).
pub struct MappedHostSlice<T: DeviceRepr> {
    gpu: Arc<GpuInner>,
    buffer: BufferId,
    host: *mut T,
    dev: u64,
    len: usize,
    label: String,
    /// How often the host borrowed the buffer for writing (`as_mut_slice`).
    host_writes: usize,
}

// SAFETY: the memory is owned by this value; host access goes through &self / &mut self.
unsafe impl<T: DeviceRepr> Send for MappedHostSlice<T> {}
// SAFETY: `&self` only reads the memory (`as_slice`, after the device's writers finish);
// writing it, from the host or a kernel, needs `&mut self`.
unsafe impl<T: DeviceRepr> Sync for MappedHostSlice<T> {}

impl Gpu {
    /// `len` zeroed values of page-locked host memory that kernels can address directly
    /// (`cudaHostAlloc(&p, bytes, cudaHostAllocMapped)`, then `cudaHostGetDevicePointer`).
    pub fn alloc_mapped<T: DeviceRepr>(&self, len: usize) -> Result<MappedHostSlice<T>> {
        let inner = &self.inner;
        let buffer = inner.new_buffer_id();
        let label = format!("mapped #{buffer}");
        let bytes = len * std::mem::size_of::<T>();
        let (host, dev) = inner.backend.alloc_mapped(bytes, std::mem::size_of::<T>(), &label)?;
        // SAFETY: the backend returned `bytes` writable bytes at `host`.
        unsafe { std::ptr::write_bytes(host, 0, bytes) };
        Ok(MappedHostSlice { gpu: inner.clone(), buffer, host: host as *mut T, dev, len, label, host_writes: 0 })
    }
}

impl<T: DeviceRepr> MappedHostSlice<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The id the trace uses for this buffer (launches list the buffers they touch by id).
    pub fn id(&self) -> BufferId {
        self.buffer
    }
    /// The address kernels use (`cudaHostGetDevicePointer`).
    pub fn device_ptr(&self) -> u64 {
        self.dev
    }
    /// Gives the buffer a name that diagnostics use instead of `mapped #N`.
    pub fn set_label(&mut self, label: impl Into<String>) {
        self.label = label.into();
    }
    pub fn label(&self) -> &str {
        &self.label
    }

    /// How many times the host has borrowed the buffer for writing (`as_mut_slice`): a grader
    /// tells a result a kernel wrote from one the host put there.
    pub fn host_writes(&self) -> usize {
        self.host_writes
    }

    /// Reads the buffer from the host, once the device work that writes it is done.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.host_access(false)?;
        // SAFETY: `len` initialised values (zeroed at allocation); no device work writes them now.
        Ok(unsafe { std::slice::from_raw_parts(self.host, self.len) })
    }

    /// Writes the buffer from the host, once the device work that uses it is done.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.host_access(true)?;
        self.host_writes += 1;
        // SAFETY: as in `as_slice`, and no device work reads them either.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host, self.len) })
    }

    /// Orders the host after the device work that conflicts with a host access: waits for it
    /// (automatic synchronisation) or reports it.
    fn host_access(&self, write: bool) -> Result<()> {
        let auto = self.gpu.auto_sync.load(std::sync::atomic::Ordering::SeqCst);
        let mut st = lock(&self.gpu.state);
        for u in st.order.host_unordered(self.buffer, write) {
            if !auto {
                let (host, device) = (if write { "writes" } else { "reads" }, if u.write { "writes" } else { "reads" });
                return Err(GpuError::Hazard(format!(
                    "the host {host} mapped buffer `{}`, which `{}` on stream {} {device}, and the host has not waited for it: \
                     the kernel may still be running.\n  fix: synchronize stream {} (or an event recorded after `{}`) before \
                     the host touches mapped memory",
                    self.label, u.what, u.stream, u.stream, u.what
                )));
            }
            self.gpu.backend.synchronize_event(u.event)?;
            st.order.host_reached(u.stream, u.seq);
        }
        Ok(())
    }
}

impl<T: DeviceRepr> Sealed for MappedHostSlice<T> {}
impl<T: DeviceRepr> DevicePtr<T> for MappedHostSlice<T> {
    fn raw(&self) -> RawRef<'_> {
        let bytes = self.len * std::mem::size_of::<T>();
        RawRef { gpu: &self.gpu, buffer: self.buffer, addr: self.dev, bytes, offset: 0, label: &self.label, mapped: true }
    }
    fn len(&self) -> usize {
        self.len
    }
}
impl<T: DeviceRepr> DevicePtrMut<T> for MappedHostSlice<T> {}

impl<T: DeviceRepr> Drop for MappedHostSlice<T> {
    fn drop(&mut self) {
        // Device work still using the memory must finish before it goes back (errors have nowhere
        // to go from Drop; the device keeps the evidence).
        let pending = lock(&self.gpu.state).order.host_unordered(self.buffer, true);
        for u in pending {
            let _ = self.gpu.backend.synchronize_event(u.event);
        }
        let mut st = lock(&self.gpu.state);
        st.order.forget_buffer(self.buffer);
        drop(st);
        // SAFETY: allocated by alloc_mapped with these pointers; nothing uses it any more.
        unsafe { self.gpu.backend.free_mapped(self.host as *mut u8, self.dev) };
    }
}

impl<T: DeviceRepr> std::fmt::Debug for MappedHostSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedHostSlice<{}>({} × {}, device {:#x})", T::RUST_NAME, self.label, self.len, self.dev)
    }
}
