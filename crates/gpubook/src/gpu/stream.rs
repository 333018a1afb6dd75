//! `Stream`: an ordered queue of device work (cudarc's `CudaStream`). Copies, memsets, launches
//! and event records issued on one stream run in order; streams run independently of each other
//! unless events order them.

use super::context::Gpu;
use super::error::{GpuError, Result};
use super::event::Event;
use super::host::{HostSlice, HostSliceMut};
use super::ids::{HostMem, StreamId};
use super::info::BackendKind;
use super::memory::{DevicePtr, DevicePtrMut, DeviceSlice, RawRef};
use super::ordering::Access;
use super::repr::DeviceRepr;
use super::trace::{self, CopyDir, OpKind, Stamp, host_mem_pinned};
use crate::sync::lock;
use std::marker::PhantomData;
use std::sync::Arc;

pub struct Stream {
    gpu: Gpu,
    id: StreamId,
    owned: bool,
}

impl Gpu {
    /// The default stream (stream 0).
    pub fn default_stream(&self) -> Arc<Stream> {
        Arc::new(Stream::new(self.clone(), 0, false))
    }

    /// A new stream, independent of every other (`cudaStreamCreateWithFlags(.., NonBlocking)`).
    pub fn new_stream(&self) -> Result<Arc<Stream>> {
        let id = self.inner.backend.new_stream()?;
        Ok(Arc::new(Stream::new(self.clone(), id, true)))
    }
}

impl Stream {
    pub(crate) fn new(gpu: Gpu, id: StreamId, owned: bool) -> Self {
        Stream { gpu, id, owned }
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The stream's number in the trace (0 is the default stream).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Allocates `len` values (`cudaMallocAsync`). The contents are unspecified: garbage on a GPU,
    /// a NaN/0xFF poison pattern on the emulator, so a kernel that forgets to write shows.
    ///
    /// # Safety
    /// Marked unsafe as in cudarc: reading the memory before writing it yields garbage.
    pub unsafe fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceSlice<T>> {
        let inner = &self.gpu.inner;
        let buffer = inner.new_buffer_id();
        let bytes = len * std::mem::size_of::<T>();
        let label = format!("buffer #{buffer}");
        let mut addr = 0;
        let kind = OpKind::Alloc { buffer, bytes, label: label.clone() };
        let what = format!("alloc of {len} × {}", T::RUST_NAME);
        inner.run_op(self.id, kind, &what, &[], |b| {
            addr = b.alloc(self.id, bytes, std::mem::size_of::<T>(), &label)?;
            Ok(())
        })?;
        let mut slice = DeviceSlice { gpu: inner.clone(), buffer, addr, len, stream: self.id, label, _t: PhantomData };
        // The emulator poisons every allocation itself and tracks which bytes were never
        // written; a memset here would count as writing them.
        let emulated = inner.backend.info().backend == BackendKind::Emulator;
        if inner.poison.load(std::sync::atomic::Ordering::SeqCst) && bytes > 0 && !emulated {
            self.memset_bytes(&mut slice, 0xFF)?;
        }
        Ok(slice)
    }

    /// Allocates `len` zeroed values (`cudaMallocAsync` + `cudaMemsetAsync`).
    pub fn alloc_zeros<T: DeviceRepr>(&self, len: usize) -> Result<DeviceSlice<T>> {
        // SAFETY: memset_zeros writes every byte before the slice is returned.
        let mut s = unsafe { self.alloc::<T>(len) }?;
        self.memset_zeros(&mut s)?;
        Ok(s)
    }

    /// Allocates a device copy of host data (`cudaMalloc` + `cudaMemcpy(HostToDevice)`).
    pub fn clone_htod<T: DeviceRepr, Src: HostSlice<T> + ?Sized>(&self, src: &Src) -> Result<DeviceSlice<T>> {
        let (_, len, _) = src.host_ptr();
        // SAFETY: memcpy_htod fills all `len` values from `src` before the slice is returned.
        let mut dst = unsafe { self.alloc::<T>(len) }?;
        self.memcpy_htod(src, &mut dst)?;
        Ok(dst)
    }

    /// Copies host data into existing device memory of the same length.
    pub fn memcpy_htod<T: DeviceRepr, Src: HostSlice<T> + ?Sized, Dst: DevicePtrMut<T>>(&self, src: &Src, dst: &mut Dst) -> Result<()> {
        let (ptr, len, mem) = src.host_ptr();
        let d = self.own(dst.raw())?;
        same_len("memcpy_htod", len, dst.len())?;
        let bytes = d.bytes;
        // Only a synchronous (pageable) copy is digested: hashing a pinned chunk before issuing its
        // asynchronous copy would hold the host up and stop the very overlap the chapters measure
        // (the H200 showed it).
        // SAFETY: the host slice holds `len` elements, `bytes` bytes, valid while `src` is borrowed.
        let digest = (self.digests_on() && mem == HostMem::Pageable)
            .then(|| trace::digest(unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) }));
        let (pinned, host) = (host_mem_pinned(mem), Some(ptr as u64));
        let kind = OpKind::Copy { dir: CopyDir::HostToDevice, bytes, pinned, src: None, dst: Some(d.buffer), digest, host };
        let access = [access(&d, true)];
        self.gpu
            .inner
            // SAFETY: `ptr` holds `bytes` bytes (same_len matched the lengths) and stays valid until
            // the copy completes: a pageable copy is done on return, a pinned source's Pending waits.
            .run_op(self.id, kind, "memcpy_htod", &access, |b| unsafe { b.copy_htod(self.id, d.addr, ptr as *const u8, bytes, mem) })?;
        if let Some(p) = src.pending() {
            p.track(&self.gpu.inner, self.id)?;
            if self.digests_on() {
                p.digest_later(CopyDir::HostToDevice, ptr as u64, bytes);
            }
        }
        Ok(())
    }

    /// Copies device memory into a host buffer of the same length. From pageable memory this
    /// returns when the data has arrived; into a pinned buffer it may return at once.
    pub fn memcpy_dtoh<T: DeviceRepr, Src: DevicePtr<T>, Dst: HostSliceMut<T> + ?Sized>(&self, src: &Src, dst: &mut Dst) -> Result<()> {
        let s = self.own(src.raw())?;
        let (_, len, mem) = dst.host_ptr();
        same_len("memcpy_dtoh", src.len(), len)?;
        let ptr = dst.host_ptr_mut() as *mut u8;
        let bytes = s.bytes;
        if let Some(p) = dst.pending()
            && self.digests_on()
        {
            p.digest_uploads_now(&self.gpu.inner);
        }
        let (pinned, host) = (host_mem_pinned(mem), Some(ptr as u64));
        let kind = OpKind::Copy { dir: CopyDir::DeviceToHost, bytes, pinned, src: Some(s.buffer), dst: None, digest: None, host };
        let access = [access(&s, false)];
        // SAFETY: `ptr` holds `bytes` writable bytes (same_len matched the lengths), borrowed
        // mutably here; a pageable copy is done before return, a pinned one's Pending waits.
        self.gpu.inner.run_op(self.id, kind, "memcpy_dtoh", &access, |b| unsafe { b.copy_dtoh(self.id, ptr, s.addr, bytes, mem) })?;
        match dst.pending() {
            Some(p) => {
                p.track(&self.gpu.inner, self.id)?;
                if self.digests_on() {
                    p.digest_later(CopyDir::DeviceToHost, ptr as u64, bytes);
                }
                Ok(())
            }
            None if mem == HostMem::Pageable => {
                self.host_wait()?;
                if self.digests_on() {
                    // SAFETY: the copy has finished (host_wait) and `dst` holds `bytes` bytes.
                    let d = trace::digest(unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) });
                    lock(&self.gpu.inner.state).trace.set_download_digest(self.id, s.buffer, d);
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn digests_on(&self) -> bool {
        self.gpu.inner.digests.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Copies device memory into a new `Vec` (`cudaMemcpy(DeviceToHost)`); waits for it.
    pub fn clone_dtoh<T: DeviceRepr, Src: DevicePtr<T>>(&self, src: &Src) -> Result<Vec<T>> {
        // SAFETY: DeviceRepr types are valid for every bit pattern, all-zero included.
        let mut out = vec![unsafe { std::mem::zeroed::<T>() }; src.len()];
        self.memcpy_dtoh(src, &mut out)?;
        Ok(out)
    }

    /// Copies between two device ranges of the same length (`cudaMemcpy(DeviceToDevice)`).
    pub fn memcpy_dtod<T: DeviceRepr, Src: DevicePtr<T>, Dst: DevicePtrMut<T>>(&self, src: &Src, dst: &mut Dst) -> Result<()> {
        let (s, d) = (self.own(src.raw())?, self.own(dst.raw())?);
        same_len("memcpy_dtod", src.len(), dst.len())?;
        let bytes = s.bytes;
        let kind = OpKind::Copy {
            dir: CopyDir::DeviceToDevice,
            bytes,
            pinned: false,
            src: Some(s.buffer),
            dst: Some(d.buffer),
            digest: None,
            host: None,
        };
        let acc = [access(&s, false), access(&d, true)];
        self.gpu.inner.run_op(self.id, kind, "memcpy_dtod", &acc, |b| b.copy_dtod(self.id, d.addr, s.addr, bytes))?;
        Ok(())
    }

    /// A new allocation holding a copy of `src`.
    pub fn clone_dtod<T: DeviceRepr, Src: DevicePtr<T>>(&self, src: &Src) -> Result<DeviceSlice<T>> {
        // SAFETY: memcpy_dtod fills all of it from `src` before the slice is returned.
        let mut dst = unsafe { self.alloc::<T>(src.len()) }?;
        self.memcpy_dtod(src, &mut dst)?;
        Ok(dst)
    }

    /// Sets every byte to zero (`cudaMemsetAsync(ptr, 0, bytes)`).
    pub fn memset_zeros<T: DeviceRepr, Dst: DevicePtrMut<T>>(&self, dst: &mut Dst) -> Result<()> {
        self.memset_bytes(dst, 0)
    }

    /// Sets every byte to `value` (`cudaMemsetAsync`: bytes, not elements).
    pub fn memset_bytes<T: DeviceRepr, Dst: DevicePtrMut<T>>(&self, dst: &mut Dst, value: u8) -> Result<()> {
        let d = self.own(dst.raw())?;
        let kind = OpKind::Memset { buffer: d.buffer, bytes: d.bytes, value };
        self.gpu.inner.run_op(self.id, kind, "memset", &[access(&d, true)], |b| b.memset(self.id, d.addr, value, d.bytes))?;
        Ok(())
    }

    /// Records an event at the current end of this stream (`cudaEventRecord`).
    pub fn record_event(&self) -> Result<Event> {
        let inner = &self.gpu.inner;
        let b = inner.backend.as_ref();
        let id = b.record_event(self.id)?;
        let now = b.host_now_us();
        let mut st = lock(&inner.state);
        st.order.record(self.id, id);
        st.push(self.gpu.ordinal(), self.id, OpKind::RecordEvent, Stamp::Known(now, now));
        Ok(Event::new(inner.clone(), id, self.id))
    }

    /// Makes later work on this stream wait for `event` (`cudaStreamWaitEvent`).
    pub fn wait(&self, event: &Event) -> Result<()> {
        if !Arc::ptr_eq(&event.gpu, &self.gpu.inner) {
            return Err(GpuError::Size("Stream::wait: the event belongs to another device".into()));
        }
        let inner = &self.gpu.inner;
        let b = inner.backend.as_ref();
        b.wait_event(self.id, event.id)?;
        let now = b.host_now_us();
        let mut st = lock(&inner.state);
        st.order.wait(self.id, event.id);
        st.push(self.gpu.ordinal(), self.id, OpKind::WaitEvent { automatic: false }, Stamp::Known(now, now));
        Ok(())
    }

    /// A new stream whose work starts after everything issued here so far.
    pub fn fork(&self) -> Result<Arc<Stream>> {
        let s = self.gpu.new_stream()?;
        s.wait(&self.record_event()?)?;
        Ok(s)
    }

    /// Later work on this stream waits for everything issued on `other` so far.
    pub fn join(&self, other: &Stream) -> Result<()> {
        self.wait(&other.record_event()?)
    }

    /// Blocks the host until this stream's work is done (`cudaStreamSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        self.host_wait()
    }

    fn host_wait(&self) -> Result<()> {
        let inner = &self.gpu.inner;
        let b = inner.backend.as_ref();
        let start = b.host_now_us();
        b.synchronize_stream(self.id)?;
        let end = b.host_now_us();
        let mut st = lock(&inner.state);
        st.order.host_synchronized_stream(self.id);
        st.push(self.gpu.ordinal(), self.id, OpKind::SynchronizeStream, Stamp::Known(start, end));
        Ok(())
    }

    /// Memory of another device cannot be used on this stream.
    fn own<'r>(&self, r: RawRef<'r>) -> Result<RawRef<'r>> {
        if Arc::ptr_eq(r.gpu, &self.gpu.inner) {
            Ok(r)
        } else {
            Err(GpuError::Size(format!(
                "buffer `{}` lives on another device than this stream's (device {}); copy it across first",
                r.label,
                self.gpu.ordinal()
            )))
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            self.gpu.inner.backend.destroy_stream(self.id);
        }
    }
}

pub(crate) fn access(r: &RawRef<'_>, write: bool) -> Access {
    Access { buffer: r.buffer, start: r.offset, end: r.offset + r.bytes, write, label: r.label.to_string() }
}

fn same_len(what: &str, src: usize, dst: usize) -> Result<()> {
    if src == dst {
        Ok(())
    } else {
        Err(GpuError::Size(format!(
            "{what}: the source holds {src} elements but the destination {dst}; copies move whole slices \
             of equal length (take a sub-slice with .slice(..) to copy part of one)"
        )))
    }
}
