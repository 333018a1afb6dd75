//! `Event`: a point in a stream's work (cudarc's `CudaEvent`). Record it on one stream, make
//! another stream wait on it, or time the work between two events.

use super::context::GpuInner;
use super::error::{GpuError, Result};
use super::ids::{EventId, StreamId};
use crate::sync::lock;
use std::sync::Arc;

pub struct Event {
    pub(crate) gpu: Arc<GpuInner>,
    pub(crate) id: EventId,
    pub(crate) stream: StreamId,
}

impl Event {
    pub(crate) fn new(gpu: Arc<GpuInner>, id: EventId, stream: StreamId) -> Self {
        Event { gpu, id, stream }
    }

    /// The stream it was recorded on.
    pub fn stream(&self) -> u32 {
        self.stream
    }

    /// Blocks the host until the work before the event is done (`cudaEventSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        self.gpu.host_wait_event(self.stream, self.id)
    }

    /// Milliseconds from this event to `end` (`cudaEventElapsedTime`); waits for both.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        if !Arc::ptr_eq(&self.gpu, &end.gpu) {
            return Err(GpuError::Size("elapsed_ms: the two events belong to different devices".into()));
        }
        let b = self.gpu.backend.as_ref();
        Ok(((b.event_time_us(end.id)? - b.event_time_us(self.id)?) / 1e3) as f32)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        lock(&self.gpu.state).order.forget_event(self.id);
        self.gpu.backend.destroy_event(self.id);
    }
}
