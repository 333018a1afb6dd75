//! Device memory: `DeviceSlice<T>` owns an allocation (cudarc's `CudaSlice`), `DeviceView` and
//! `DeviceViewMut` borrow a range of one (cudarc's `CudaView`/`CudaViewMut`). Dropping a slice
//! frees it, in order on the stream that allocated it (`cudaFreeAsync`).

use super::context::GpuInner;
use super::repr::DeviceRepr;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// Identifies an allocation within a `Gpu` (stable across views and in the trace).
pub type BufferId = u64;

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
}

/// Anything that names device memory holding `T`s: a slice or a view of one.
pub trait DevicePtr<T> {
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
        self.gpu.relabel(self.buffer, &self.label);
    }
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A read-only view of `range` (in elements), like `&v[range]`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        self.try_slice(range).expect("DeviceSlice::slice: range out of bounds")
    }
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Option<DeviceView<'_, T>> {
        let (start, end) = bounds(range, self.len)?;
        Some(DeviceView { owner: self, start, len: end - start })
    }
    /// A writable view of `range` (in elements), like `&mut v[range]`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceViewMut<'_, T> {
        self.try_slice_mut(range).expect("DeviceSlice::slice_mut: range out of bounds")
    }
    pub fn try_slice_mut(&mut self, range: impl RangeBounds<usize>) -> Option<DeviceViewMut<'_, T>> {
        let (start, end) = bounds(range, self.len)?;
        Some(DeviceViewMut { owner: self, start, len: end - start })
    }
    pub fn as_view(&self) -> DeviceView<'_, T> {
        self.slice(..)
    }
    pub fn as_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.slice_mut(..)
    }
    pub fn split_at(&self, mid: usize) -> (DeviceView<'_, T>, DeviceView<'_, T>) {
        (self.slice(..mid), self.slice(mid..))
    }
    /// Two disjoint writable halves, e.g. the two buffers of a double-buffering scheme.
    pub fn split_at_mut(&mut self, mid: usize) -> (DeviceViewMut<'_, T>, DeviceViewMut<'_, T>) {
        assert!(mid <= self.len, "split_at_mut: {mid} is past the end ({})", self.len);
        let owner: &DeviceSlice<T> = self;
        (DeviceViewMut { owner, start: 0, len: mid }, DeviceViewMut { owner, start: mid, len: owner.len - mid })
    }
    /// Writable views of `chunk` elements each (the last one shorter), for chunked pipelines.
    pub fn chunks_mut(&mut self, chunk: usize) -> Vec<DeviceViewMut<'_, T>> {
        assert!(chunk > 0, "chunks_mut: chunk size must be positive");
        let owner: &DeviceSlice<T> = self;
        (0..owner.len).step_by(chunk).map(|s| DeviceViewMut { owner, start: s, len: chunk.min(owner.len - s) }).collect()
    }

    fn raw_range(&self, start: usize, len: usize) -> RawRef<'_> {
        let size = std::mem::size_of::<T>();
        RawRef {
            gpu: &self.gpu,
            buffer: self.buffer,
            addr: self.addr + (start * size) as u64,
            bytes: len * size,
            offset: start * size,
            label: &self.label,
        }
    }
}

fn bounds(range: impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
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

/// A borrowed, read-only range of a `DeviceSlice`.
pub struct DeviceView<'a, T: DeviceRepr> {
    owner: &'a DeviceSlice<T>,
    start: usize,
    len: usize,
}

/// A borrowed, writable range of a `DeviceSlice`.
pub struct DeviceViewMut<'a, T: DeviceRepr> {
    owner: &'a DeviceSlice<T>,
    start: usize,
    len: usize,
}

impl<'a, T: DeviceRepr> DeviceView<'a, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'a, T> {
        let (s, e) = bounds(range, self.len).expect("DeviceView::slice: range out of bounds");
        DeviceView { owner: self.owner, start: self.start + s, len: e - s }
    }
}

impl<T: DeviceRepr> DeviceViewMut<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceViewMut<'_, T> {
        let (s, e) = bounds(range, self.len).expect("DeviceViewMut::slice_mut: range out of bounds");
        DeviceViewMut { owner: self.owner, start: self.start + s, len: e - s }
    }
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView { owner: self.owner, start: self.start, len: self.len }
    }
}

impl<T: DeviceRepr> DevicePtr<T> for DeviceSlice<T> {
    fn raw(&self) -> RawRef<'_> {
        self.raw_range(0, self.len)
    }
    fn len(&self) -> usize {
        self.len
    }
}
impl<T: DeviceRepr> DevicePtrMut<T> for DeviceSlice<T> {}

impl<T: DeviceRepr> DevicePtr<T> for DeviceView<'_, T> {
    fn raw(&self) -> RawRef<'_> {
        self.owner.raw_range(self.start, self.len)
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl<T: DeviceRepr> DevicePtr<T> for DeviceViewMut<'_, T> {
    fn raw(&self) -> RawRef<'_> {
        self.owner.raw_range(self.start, self.len)
    }
    fn len(&self) -> usize {
        self.len
    }
}
impl<T: DeviceRepr> DevicePtrMut<T> for DeviceViewMut<'_, T> {}
