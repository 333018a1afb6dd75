//! Strided 2-D views: a `rows × cols` matrix that lives inside a larger buffer, row `r` starting
//! `r * row_stride` elements after the first. It is what PyTorch's `from_blob(ptr, {rows, cols},
//! {row_stride, 1})` makes: a tensor over memory someone else owns, with no copy. A kernel gets
//! the pointer to the first element and the stride (BLAS's "leading dimension").
//!
//! The ordering check and the trace see the whole span from the first element to the last, gaps
//! included: conservative, never wrong.

use super::error::{GpuError, Result};
use super::memory::{DevicePtr, DeviceSlice, DeviceView, DeviceViewMut, RawRef};
use super::repr::DeviceRepr;

impl<T: DeviceRepr> DeviceSlice<T> {
    /// A `rows × cols` matrix of `U` inside this allocation, its first element `byte_offset`
    /// bytes in and each row `row_stride` elements after the previous one (`from_blob` with
    /// shape and strides). See [`StridedView`].
    pub fn view_2d<U: DeviceRepr>(&self, byte_offset: usize, rows: usize, cols: usize, row_stride: usize) -> Result<StridedView<'_, U>> {
        self.as_view().view_2d(byte_offset, rows, cols, row_stride)
    }
    /// The writable twin of [`view_2d`](Self::view_2d): e.g. a kernel's output written straight
    /// into the payload slots of a message buffer.
    pub fn view_2d_mut<U: DeviceRepr>(
        &mut self,
        byte_offset: usize,
        rows: usize,
        cols: usize,
        row_stride: usize,
    ) -> Result<StridedViewMut<'_, U>> {
        self.as_view_mut().into_view_2d(byte_offset, rows, cols, row_stride)
    }
}

impl<'a, T: DeviceRepr> DeviceView<'a, T> {
    /// A `rows × cols` matrix of `U` inside this view (see [`DeviceSlice::view_2d`]).
    pub fn view_2d<U: DeviceRepr>(&self, byte_offset: usize, rows: usize, cols: usize, row_stride: usize) -> Result<StridedView<'a, U>> {
        let span = strided_span(self.label(), rows, cols, row_stride)?;
        Ok(StridedView::new(self.view_as::<U>(byte_offset, span)?, rows, cols, row_stride))
    }
}

impl<'a, T: DeviceRepr> DeviceViewMut<'a, T> {
    /// A writable `rows × cols` matrix of `U` inside this view.
    pub fn view_2d_mut<U: DeviceRepr>(
        &mut self,
        byte_offset: usize,
        rows: usize,
        cols: usize,
        row_stride: usize,
    ) -> Result<StridedViewMut<'_, U>> {
        let span = strided_span(self.label(), rows, cols, row_stride)?;
        Ok(StridedViewMut::new(self.view_as_mut::<U>(byte_offset, span)?, rows, cols, row_stride))
    }
    /// [`view_2d_mut`](Self::view_2d_mut) that keeps the original borrow's lifetime.
    pub(crate) fn into_view_2d<U: DeviceRepr>(
        self,
        byte_offset: usize,
        rows: usize,
        cols: usize,
        row_stride: usize,
    ) -> Result<StridedViewMut<'a, U>> {
        let span = strided_span(self.label(), rows, cols, row_stride)?;
        Ok(StridedViewMut::new(self.into_view_as::<U>(byte_offset, span)?, rows, cols, row_stride))
    }
}

/// Elements a strided `rows × cols` matrix spans from its first element to its last.
fn strided_span(label: &str, rows: usize, cols: usize, row_stride: usize) -> Result<usize> {
    if rows > 1 && cols > row_stride {
        return Err(GpuError::Size(format!(
            "a {rows} × {cols} view of `{label}` with a row stride of {row_stride} elements would make rows overlap: \
             the stride must be at least the row length ({cols})"
        )));
    }
    Ok(if rows == 0 || cols == 0 { 0 } else { (rows - 1) * row_stride + cols })
}

/// A read-only strided matrix view (see the module docs). Made by `view_2d`.
#[derive(Clone, Copy)]
pub struct StridedView<'a, T: DeviceRepr> {
    span: DeviceView<'a, T>,
    rows: usize,
    cols: usize,
    row_stride: usize,
}

/// A writable strided matrix view. Made by `view_2d_mut`.
pub struct StridedViewMut<'a, T: DeviceRepr> {
    span: DeviceViewMut<'a, T>,
    rows: usize,
    cols: usize,
    row_stride: usize,
}

impl<'a, T: DeviceRepr> StridedView<'a, T> {
    pub(crate) fn new(span: DeviceView<'a, T>, rows: usize, cols: usize, row_stride: usize) -> Self {
        StridedView { span, rows, cols, row_stride }
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Elements from the start of one row to the start of the next.
    pub fn row_stride(&self) -> usize {
        self.row_stride
    }
    /// Row `r` as a contiguous view of `cols` elements.
    pub fn row(&self, r: usize) -> DeviceView<'a, T> {
        assert!(r < self.rows, "row {r} of a view with {} rows", self.rows);
        self.span.slice(r * self.row_stride..r * self.row_stride + self.cols)
    }
    /// Everything from the first element to the last, gaps between rows included.
    pub fn span(&self) -> DeviceView<'a, T> {
        self.span
    }
}

impl<T: DeviceRepr> StridedViewMut<'_, T> {
    pub(crate) fn new(span: DeviceViewMut<'_, T>, rows: usize, cols: usize, row_stride: usize) -> StridedViewMut<'_, T> {
        StridedViewMut { span, rows, cols, row_stride }
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn row_stride(&self) -> usize {
        self.row_stride
    }
    /// Row `r`, writable.
    pub fn row_mut(&mut self, r: usize) -> DeviceViewMut<'_, T> {
        assert!(r < self.rows, "row {r} of a view with {} rows", self.rows);
        let s = r * self.row_stride;
        self.span.slice_mut(s..s + self.cols)
    }
    pub fn as_view(&self) -> StridedView<'_, T> {
        StridedView { span: self.span.as_view(), rows: self.rows, cols: self.cols, row_stride: self.row_stride }
    }
}

// A strided view is not a `DevicePtr`: a whole-slice copy of it would move the gaps between rows
// too. As a kernel argument it is a pointer to its first element; the ordering check and the
// trace see its span.
impl<T: DeviceRepr> StridedView<'_, T> {
    pub(crate) fn raw(&self) -> RawRef<'_> {
        self.span.raw()
    }
}

impl<T: DeviceRepr> StridedViewMut<'_, T> {
    pub(crate) fn raw(&self) -> RawRef<'_> {
        self.span.raw()
    }
}
