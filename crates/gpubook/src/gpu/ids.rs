//! The numbers the layers above pass around: buffers, streams and events, and where the host end
//! of a copy lives. Plain values, so every layer can name them without depending on another.

/// Identifies an allocation within a `Gpu` (stable across views and in the trace).
pub type BufferId = u64;

/// Streams are numbered per device; 0 is the default stream.
pub(crate) type StreamId = u32;

/// Events are numbered per device.
pub(crate) type EventId = u64;

/// Implemented by this crate's memory types alone: `HostSlice` and `DevicePtr` extend it, so no
/// other crate can implement them with a pointer or a length that copies and launches would then
/// trust. (It is public but unnameable outside: `gpu` does not re-export it.)
pub trait Sealed {}

/// Where host memory of a copy lives: pageable memory makes a GPU stage the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMem {
    Pageable,
    Pinned,
}
