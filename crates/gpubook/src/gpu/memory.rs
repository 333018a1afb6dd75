//! Device memory: `DeviceSlice<T>` owns an allocation (cudarc's `CudaSlice`), `DeviceView` and
//! `DeviceViewMut` borrow a range of one (cudarc's `CudaView`/`CudaViewMut`). Dropping a slice
//! frees it, in order on the stream that allocated it (`cudaFreeAsync`).

use super::context::GpuInner;
use super::error::{GpuError, Result};
use super::ids::{BufferId, Sealed};
use super::repr::DeviceRepr;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// What the API knows about the memory an argument or a copy refers to.
#[derive(Clone)]
pub struct RawRef<'a> {
    pub(crate) gpu: &'a Arc<GpuInner>,
    pub(crate) buffer: BufferId,
    /// Device address of the first element of this slice or view.
    pub(crate) addr: u64,
    pub(crate) bytes: usize,
    /// Byte offset of this view within its allocation.
    pub(crate) offset: usize,
    pub(crate) label: &'a str,
    /// Mapped pinned host memory: kernels reach it over the bus (PCIe), not from device memory.
    pub(crate) mapped: bool,
}

/// Anything that names device memory holding `T`s: a slice or a view of one. Sealed: the copies
/// and launches trust `raw` and `len`, so only this crate's types implement it.
pub trait DevicePtr<T>: Sealed {
    #[doc(hidden)]
    fn raw(&self) -> RawRef<'_>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn num_bytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
}

/// Device memory that may be written through.
pub trait DevicePtrMut<T>: DevicePtr<T> {}

/// An allocation of `len` values of `T` on one device.
pub struct DeviceSlice<T: DeviceRepr> {
    pub(crate) gpu: Arc<GpuInner>,
    pub(crate) buffer: BufferId,
    pub(crate) addr: u64,
    pub(crate) len: usize,
    pub(crate) stream: u32,
    pub(crate) label: String,
    pub(crate) _t: PhantomData<T>,
}

impl<T: DeviceRepr> DeviceSlice<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// The id the trace uses for this allocation.
    pub fn id(&self) -> BufferId {
        self.buffer
    }
    /// The raw device address (`CUdeviceptr`), e.g. to pass to cudarc directly.
    pub fn device_ptr(&self) -> u64 {
        self.addr
    }
    /// Gives the buffer a name that diagnostics and the trace use instead of `buffer #N`.
    pub fn set_label(&mut self, label: impl Into<String>) {
        self.label = label.into();
        self.gpu.relabel(self.buffer, self.addr, &self.label);
    }
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A read-only view of `range` (in elements), like `&v[range]`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        self.try_slice(range).expect("DeviceSlice::slice: range out of bounds")
    }
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Option<DeviceView<'_, T>> {
        self.as_view().try_slice(range)
    }
    /// A writable view of `range` (in elements), like `&mut v[range]`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceViewMut<'_, T> {
        self.try_slice_mut(range).expect("DeviceSlice::slice_mut: range out of bounds")
    }
    pub fn try_slice_mut(&mut self, range: impl RangeBounds<usize>) -> Option<DeviceViewMut<'_, T>> {
        let (start, end) = bounds(range, self.len)?;
        let size = std::mem::size_of::<T>();
        Some(DeviceViewMut::new(self.region(), start * size, end - start))
    }
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView::new(self.region(), 0, self.len)
    }
    pub fn as_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::new(self.region(), 0, self.len)
    }
    pub fn split_at(&self, mid: usize) -> (DeviceView<'_, T>, DeviceView<'_, T>) {
        (self.slice(..mid), self.slice(mid..))
    }
    /// Two disjoint writable halves, e.g. the two buffers of a double-buffering scheme.
    pub fn split_at_mut(&mut self, mid: usize) -> (DeviceViewMut<'_, T>, DeviceViewMut<'_, T>) {
        assert!(mid <= self.len, "split_at_mut: {mid} is past the end ({})", self.len);
        let (r, size) = (self.region(), std::mem::size_of::<T>());
        (DeviceViewMut::new(r, 0, mid), DeviceViewMut::new(r, mid * size, self.len - mid))
    }
    /// Writable views of `chunk` elements each (the last one shorter), for chunked pipelines.
    pub fn chunks_mut(&mut self, chunk: usize) -> Vec<DeviceViewMut<'_, T>> {
        assert!(chunk > 0, "chunks_mut: chunk size must be positive");
        let (r, size, len) = (self.region(), std::mem::size_of::<T>(), self.len);
        (0..len).step_by(chunk).map(|s| DeviceViewMut::new(r, s * size, chunk.min(len - s))).collect()
    }

    /// `len` values of another type `U` starting `byte_offset` bytes into this allocation: the
    /// same memory seen differently, with no copy (PyTorch's `from_blob`, a C cast of `ptr + off`).
    /// A byte buffer can hold headers as `i32` and payloads as `f32`, side by side.
    pub fn view_as<U: DeviceRepr>(&self, byte_offset: usize, len: usize) -> Result<DeviceView<'_, U>> {
        self.as_view().view_as(byte_offset, len)
    }
    /// The writable twin of [`view_as`](Self::view_as).
    pub fn view_as_mut<U: DeviceRepr>(&mut self, byte_offset: usize, len: usize) -> Result<DeviceViewMut<'_, U>> {
        self.as_view_mut().into_view_as(byte_offset, len)
    }

    fn region(&self) -> Region<'_> {
        Region { gpu: &self.gpu, buffer: self.buffer, addr: self.addr, label: &self.label, mapped: false }
    }

    fn raw_range(&self, start: usize, len: usize) -> RawRef<'_> {
        let size = std::mem::size_of::<T>();
        self.region().raw(start * size, len * size)
    }
}

pub(crate) fn bounds(range: impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

impl<T: DeviceRepr> Drop for DeviceSlice<T> {
    fn drop(&mut self) {
        self.gpu.free_buffer(self.buffer, self.addr, self.stream, self.num_bytes());
    }
}

impl<T: DeviceRepr> std::fmt::Debug for DeviceSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceSlice<{}>({} × {}, {:#x})", T::RUST_NAME, self.label, self.len, self.addr)
    }
}

/// The allocation a view lies in: what the API needs to name, check and trace it.
#[derive(Clone, Copy)]
pub(crate) struct Region<'a> {
    pub(crate) gpu: &'a Arc<GpuInner>,
    pub(crate) buffer: BufferId,
    /// Device address of the allocation's first byte.
    pub(crate) addr: u64,
    pub(crate) label: &'a str,
    pub(crate) mapped: bool,
}

impl<'a> Region<'a> {
    pub(crate) fn raw(&self, offset: usize, bytes: usize) -> RawRef<'a> {
        RawRef {
            gpu: self.gpu,
            buffer: self.buffer,
            addr: self.addr + offset as u64,
            bytes,
            offset,
            label: self.label,
            mapped: self.mapped,
        }
    }
}

/// A borrowed, read-only range of a `DeviceSlice` (or of any device memory the API tracks).
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T: DeviceRepr> {
    region: Region<'a>,
    /// Byte offset of the first element within the allocation.
    offset: usize,
    len: usize,
    _t: PhantomData<T>,
}

/// A borrowed, writable range of a `DeviceSlice`.
pub struct DeviceViewMut<'a, T: DeviceRepr> {
    region: Region<'a>,
    offset: usize,
    len: usize,
    _t: PhantomData<T>,
}

impl<'a, T: DeviceRepr> DeviceView<'a, T> {
    pub(crate) fn new(region: Region<'a>, offset: usize, len: usize) -> Self {
        DeviceView { region, offset, len, _t: PhantomData }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// The device address of the first element.
    pub fn device_ptr(&self) -> u64 {
        self.region.addr + self.offset as u64
    }
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'a, T> {
        self.try_slice(range).expect("DeviceView::slice: range out of bounds")
    }
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Option<DeviceView<'a, T>> {
        let (s, e) = bounds(range, self.len)?;
        Some(DeviceView::new(self.region, self.offset + s * std::mem::size_of::<T>(), e - s))
    }
    /// `len` values of `U` starting `byte_offset` bytes into this view (see
    /// [`DeviceSlice::view_as`]).
    pub fn view_as<U: DeviceRepr>(&self, byte_offset: usize, len: usize) -> Result<DeviceView<'a, U>> {
        let offset = reinterpret::<T, U>(self.region.label, self.offset, self.num_bytes(), byte_offset, len)?;
        Ok(DeviceView::new(self.region, offset, len))
    }
    /// The name of the allocation this view lies in.
    pub(crate) fn label(&self) -> &'a str {
        self.region.label
    }
}

impl<'a, T: DeviceRepr> DeviceViewMut<'a, T> {
    pub(crate) fn new(region: Region<'a>, offset: usize, len: usize) -> Self {
        DeviceViewMut { region, offset, len, _t: PhantomData }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// The device address of the first element.
    pub fn device_ptr(&self) -> u64 {
        self.region.addr + self.offset as u64
    }
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceViewMut<'_, T> {
        let (s, e) = bounds(range, self.len).expect("DeviceViewMut::slice_mut: range out of bounds");
        DeviceViewMut::new(self.region, self.offset + s * std::mem::size_of::<T>(), e - s)
    }
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView::new(self.region, self.offset, self.len)
    }
    /// Writable `len` values of `U` starting `byte_offset` bytes into this view.
    pub fn view_as_mut<U: DeviceRepr>(&mut self, byte_offset: usize, len: usize) -> Result<DeviceViewMut<'_, U>> {
        let offset = reinterpret::<T, U>(self.region.label, self.offset, self.num_bytes(), byte_offset, len)?;
        Ok(DeviceViewMut::new(self.region, offset, len))
    }
    /// [`view_as_mut`](Self::view_as_mut) that keeps the original borrow's lifetime.
    pub(crate) fn into_view_as<U: DeviceRepr>(self, byte_offset: usize, len: usize) -> Result<DeviceViewMut<'a, U>> {
        let offset = reinterpret::<T, U>(self.region.label, self.offset, self.num_bytes(), byte_offset, len)?;
        Ok(DeviceViewMut::new(self.region, offset, len))
    }
    /// The name of the allocation this view lies in.
    pub(crate) fn label(&self) -> &'a str {
        self.region.label
    }
}

/// Checks a reinterpretation of `bytes` bytes at allocation offset `base` as `len` values of `U`
/// starting `byte_offset` bytes in; returns the new allocation offset. The rules are the GPU's:
/// a `U` must sit at a multiple of its alignment (a misaligned load faults), and it must fit.
fn reinterpret<T: DeviceRepr, U: DeviceRepr>(label: &str, base: usize, bytes: usize, byte_offset: usize, len: usize) -> Result<usize> {
    let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
    let offset = base + byte_offset;
    if !offset.is_multiple_of(align) {
        return Err(GpuError::Size(format!(
            "a view of {} must start at a multiple of {align} bytes, but byte {byte_offset} of `{label}`'s view \
             (byte {offset} of the allocation) is not: a GPU faults on a misaligned {} load",
            U::RUST_NAME,
            U::RUST_NAME
        )));
    }
    let need = len.checked_mul(size).and_then(|b| b.checked_add(byte_offset));
    match need {
        Some(end) if end <= bytes => Ok(offset),
        _ => Err(GpuError::Size(format!(
            "a view of {len} × {} ({} bytes) from byte {byte_offset} does not fit in the {bytes} bytes of `{label}`'s {} view",
            U::RUST_NAME,
            len.saturating_mul(size),
            T::RUST_NAME
        ))),
    }
}

impl<T: DeviceRepr> Sealed for DeviceSlice<T> {}
impl<T: DeviceRepr> DevicePtr<T> for DeviceSlice<T> {
    fn raw(&self) -> RawRef<'_> {
        self.raw_range(0, self.len)
    }
    fn len(&self) -> usize {
        self.len
    }
}
impl<T: DeviceRepr> DevicePtrMut<T> for DeviceSlice<T> {}

impl<T: DeviceRepr> Sealed for DeviceView<'_, T> {}
impl<T: DeviceRepr> DevicePtr<T> for DeviceView<'_, T> {
    fn raw(&self) -> RawRef<'_> {
        self.region.raw(self.offset, self.num_bytes())
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl<T: DeviceRepr> Sealed for DeviceViewMut<'_, T> {}
impl<T: DeviceRepr> DevicePtr<T> for DeviceViewMut<'_, T> {
    fn raw(&self) -> RawRef<'_> {
        self.region.raw(self.offset, self.num_bytes())
    }
    fn len(&self) -> usize {
        self.len
    }
}
impl<T: DeviceRepr> DevicePtrMut<T> for DeviceViewMut<'_, T> {}
