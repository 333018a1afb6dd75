//! Host memory on the other end of a copy: ordinary (pageable) slices and pinned buffers.
//!
//! A GPU can only DMA from page-locked memory, so a copy from a pageable `Vec` is staged through
//! a driver buffer and does not overlap with the caller; a copy from a `PinnedHostSlice` is truly
//! asynchronous. The pinned buffer remembers its last copy and waits for it before the host may
//! touch the data again, so async copies stay safe Rust.

use super::backend::{EventId, HostMem};
use super::context::GpuInner;
use super::repr::DeviceRepr;
use std::sync::{Arc, Mutex};

/// Host memory a copy can read from.
pub trait HostSlice<T> {
    #[doc(hidden)]
    fn host_ptr(&self) -> (*const T, usize, HostMem);
    #[doc(hidden)]
    fn pending(&self) -> Option<&Pending> {
        None
    }
}

/// Host memory a copy can write into.
pub trait HostSliceMut<T>: HostSlice<T> {
    #[doc(hidden)]
    fn host_ptr_mut(&mut self) -> *mut T;
}

impl<T> HostSlice<T> for [T] {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.as_ptr(), self.len(), HostMem::Pageable)
    }
}
impl<T> HostSliceMut<T> for [T] {
    fn host_ptr_mut(&mut self) -> *mut T {
        self.as_mut_ptr()
    }
}
impl<T> HostSlice<T> for Vec<T> {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.as_ptr(), self.len(), HostMem::Pageable)
    }
}
impl<T> HostSliceMut<T> for Vec<T> {
    fn host_ptr_mut(&mut self) -> *mut T {
        self.as_mut_ptr()
    }
}
impl<T, const N: usize> HostSlice<T> for [T; N] {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.as_ptr(), N, HostMem::Pageable)
    }
}

/// The last asynchronous copy that used a pinned buffer.
#[doc(hidden)]
#[derive(Default)]
pub struct Pending(Mutex<Option<EventId>>);

impl Pending {
    pub(crate) fn set(&self, e: EventId) {
        *self.0.lock().unwrap() = Some(e);
    }
}

/// Page-locked host memory (`cudaMallocHost`; cudarc's `PinnedHostSlice`).
pub struct PinnedHostSlice<T: DeviceRepr> {
    gpu: Arc<GpuInner>,
    ptr: *mut T,
    len: usize,
    pending: Pending,
}

// SAFETY: the memory is owned by this value; access goes through &self / &mut self.
unsafe impl<T: DeviceRepr> Send for PinnedHostSlice<T> {}
unsafe impl<T: DeviceRepr> Sync for PinnedHostSlice<T> {}

impl<T: DeviceRepr> PinnedHostSlice<T> {
    pub(crate) fn new(gpu: Arc<GpuInner>, ptr: *mut T, len: usize) -> Self {
        PinnedHostSlice { gpu, ptr, len, pending: Pending::default() }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Waits for the last copy that used this buffer, then reads it.
    pub fn as_slice(&self) -> super::Result<&[T]> {
        self.wait()?;
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }
    /// Waits for the last copy that used this buffer, then lends it for writing.
    pub fn as_mut_slice(&mut self) -> super::Result<&mut [T]> {
        self.wait()?;
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
    fn wait(&self) -> super::Result<()> {
        let e = self.pending.0.lock().unwrap().take();
        match e {
            Some(e) => self.gpu.host_wait_event(e),
            None => Ok(()),
        }
    }
}

impl<T: DeviceRepr> HostSlice<T> for PinnedHostSlice<T> {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.ptr, self.len, HostMem::Pinned)
    }
    fn pending(&self) -> Option<&Pending> {
        Some(&self.pending)
    }
}
impl<T: DeviceRepr> HostSliceMut<T> for PinnedHostSlice<T> {
    fn host_ptr_mut(&mut self) -> *mut T {
        self.ptr
    }
}

impl<T: DeviceRepr> Drop for PinnedHostSlice<T> {
    fn drop(&mut self) {
        let _ = self.wait();
        unsafe { self.gpu.backend.free_pinned(self.ptr as *mut u8, self.len * std::mem::size_of::<T>()) };
    }
}
