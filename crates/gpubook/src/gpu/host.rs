//! Host memory on the other end of a copy: ordinary (pageable) slices and pinned buffers.
//!
//! A GPU can only DMA from page-locked memory, so a copy from a pageable `Vec` is staged through
//! a driver buffer and does not overlap with the caller; a copy from a `PinnedHostSlice` is truly
//! asynchronous. The pinned buffer remembers its last copy and waits for it before the host may
//! touch the data again, so async copies stay safe Rust.

use super::context::{Gpu, GpuInner};
use super::error::Result;
use super::ids::{EventId, HostMem, Sealed, StreamId};
use super::memory::bounds;
use super::repr::DeviceRepr;
use super::trace::CopyDir;
use crate::sync::lock;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::{Arc, Mutex};

/// Host memory a copy can read from. Sealed: a copy trusts `host_ptr`, so only this crate's types
/// implement it.
pub trait HostSlice<T>: Sealed {
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

impl<T> Sealed for [T] {}
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
impl<T> Sealed for Vec<T> {}
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
impl<T, const N: usize> Sealed for [T; N] {}
impl<T, const N: usize> HostSlice<T> for [T; N] {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.as_ptr(), N, HostMem::Pageable)
    }
}

/// The asynchronous copies still using a pinned buffer: an event after the last one issued on
/// each stream (a stream runs in order, so its last copy is the one to wait for). The events are
/// the buffer's own, so nothing else recycles them while it waits. While a grader records
/// digests, it also keeps the copies from and into the buffer (direction, host address, bytes)
/// whose digest the trace gets when the host next waits: hashing before issuing a copy would
/// hold the host up, and the host cannot change the bytes without waiting first.
#[doc(hidden)]
#[derive(Default)]
pub struct Pending(Mutex<Vec<(StreamId, EventId)>>, Mutex<Vec<(CopyDir, u64, usize)>>);

impl Pending {
    /// Remembers the copy just issued on `stream`.
    pub(crate) fn track(&self, gpu: &GpuInner, stream: StreamId) -> Result<()> {
        let e = gpu.backend.record_event(stream)?;
        lock(&gpu.state).order.record(stream, e);
        let mut list = lock(&self.0);
        match list.iter_mut().find(|(s, _)| *s == stream) {
            Some(slot) => gpu.release_event(std::mem::replace(&mut slot.1, e)),
            None => list.push((stream, e)),
        }
        Ok(())
    }

    /// Remembers a copy of `bytes` bytes from or into host address `host`, to digest at the next wait.
    pub(crate) fn digest_later(&self, dir: CopyDir, host: u64, bytes: usize) {
        lock(&self.1).push((dir, host, bytes));
    }

    /// Digests the uploads remembered so far, now: a download into the buffer is about to be
    /// issued, and may overwrite the bytes they carried.
    pub(crate) fn digest_uploads_now(&self, gpu: &GpuInner) {
        let mut list = lock(&self.1);
        let (uploads, rest): (Vec<_>, Vec<_>) = list.drain(..).partition(|c| c.0 == CopyDir::HostToDevice);
        *list = rest;
        drop(list);
        digest_copies(gpu, uploads);
    }

    /// Blocks the host until every tracked copy is done, then gives the downloads their digests.
    fn wait(&self, gpu: &GpuInner) -> Result<()> {
        let list = std::mem::take(&mut *lock(&self.0));
        let mut result = Ok(());
        for (stream, e) in list {
            if result.is_ok() {
                result = gpu.host_wait_event(stream, e);
            }
            gpu.release_event(e);
        }
        result?;
        let copies = std::mem::take(&mut *lock(&self.1));
        digest_copies(gpu, copies);
        Ok(())
    }
}

/// Gives each of `copies` (direction, host address, bytes) the digest of its bytes now.
fn digest_copies(gpu: &GpuInner, copies: Vec<(CopyDir, u64, usize)>) {
    for (dir, host, bytes) in copies {
        // SAFETY: the bytes lie in a pinned buffer that outlives its `Pending`; a download into
        // them has finished (the caller waited), an upload from them left them as they were.
        let d = super::trace::digest(unsafe { std::slice::from_raw_parts(host as *const u8, bytes) });
        lock(&gpu.state).trace.set_digest_at(dir, host, bytes, d);
    }
}

impl Gpu {
    /// Page-locked host memory for truly asynchronous copies (`cudaMallocHost`).
    ///
    /// # Safety
    /// The contents are uninitialised until written (as with cudarc's `alloc_pinned`).
    pub unsafe fn alloc_pinned<T: DeviceRepr>(&self, len: usize) -> Result<PinnedHostSlice<T>> {
        let ptr = self.inner.backend.alloc_pinned(len * std::mem::size_of::<T>())? as *mut T;
        Ok(PinnedHostSlice::new(self.inner.clone(), ptr, len))
    }
}

impl GpuInner {
    /// Forgets an event the API recorded for its own bookkeeping.
    pub(crate) fn release_event(&self, e: EventId) {
        lock(&self.state).order.forget_event(e);
        self.backend.destroy_event(e);
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
// SAFETY: `&self` only reads the memory (`as_slice` waits for copies into it first) or
// lends it to copies that read it; writing needs `&mut self`.
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
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait()?;
        // SAFETY: `ptr` holds `len` values while `self` lives, the copies into it are done
        // (`wait`), and `&self` lets nothing write it; `alloc_pinned`'s caller wrote them first.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }
    /// Waits for the last copy that used this buffer, then lends it for writing.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait()?;
        // SAFETY: as in `as_slice`; the copies from it are done too, and `&mut self` makes this
        // the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
    fn wait(&self) -> Result<()> {
        self.pending.wait(&self.gpu)
    }

    /// A range of the buffer (in elements) as the source of an asynchronous copy: `h + offset`
    /// in CUDA C. Chunks may be copied on different streams; `as_slice` waits for all of them.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> PinnedView<'_, T> {
        let (s, e) = bounds(range, self.len).expect("PinnedHostSlice::slice: range out of bounds");
        // SAFETY: s <= len, so the pointer stays inside the allocation.
        PinnedView { ptr: unsafe { self.ptr.add(s) }, len: e - s, pending: &self.pending, _b: PhantomData }
    }

    /// A range of the buffer as the destination of an asynchronous copy.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> PinnedViewMut<'_, T> {
        let (s, e) = bounds(range, self.len).expect("PinnedHostSlice::slice_mut: range out of bounds");
        // SAFETY: as in `slice`.
        PinnedViewMut { ptr: unsafe { self.ptr.add(s) }, len: e - s, pending: &self.pending, _b: PhantomData }
    }
}

/// A range of a pinned buffer, to copy from (see [`PinnedHostSlice::slice`]).
pub struct PinnedView<'a, T: DeviceRepr> {
    ptr: *const T,
    len: usize,
    pending: &'a Pending,
    _b: PhantomData<&'a T>,
}

/// A range of a pinned buffer, to copy into (see [`PinnedHostSlice::slice_mut`]).
pub struct PinnedViewMut<'a, T: DeviceRepr> {
    ptr: *mut T,
    len: usize,
    pending: &'a Pending,
    _b: PhantomData<&'a mut T>,
}

impl<T: DeviceRepr> PinnedView<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: DeviceRepr> PinnedViewMut<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: DeviceRepr> Sealed for PinnedView<'_, T> {}
impl<T: DeviceRepr> HostSlice<T> for PinnedView<'_, T> {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.ptr, self.len, HostMem::Pinned)
    }
    fn pending(&self) -> Option<&Pending> {
        Some(self.pending)
    }
}

impl<T: DeviceRepr> Sealed for PinnedViewMut<'_, T> {}
impl<T: DeviceRepr> HostSlice<T> for PinnedViewMut<'_, T> {
    fn host_ptr(&self) -> (*const T, usize, HostMem) {
        (self.ptr, self.len, HostMem::Pinned)
    }
    fn pending(&self) -> Option<&Pending> {
        Some(self.pending)
    }
}
impl<T: DeviceRepr> HostSliceMut<T> for PinnedViewMut<'_, T> {
    fn host_ptr_mut(&mut self) -> *mut T {
        self.ptr
    }
}

impl<T: DeviceRepr> Sealed for PinnedHostSlice<T> {}
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
        // SAFETY: `ptr` came from this backend's alloc_pinned with these bytes, the copies that
        // used it are done (`wait`), and nothing uses it after drop.
        unsafe { self.gpu.backend.free_pinned(self.ptr as *mut u8, self.len * std::mem::size_of::<T>()) };
    }
}
