//! The GPU API: cudarc 0.19's names and shapes over two backends, a CUDA GPU (through cudarc and
//! NVRTC) and gpubook's CPU emulator. What a learner writes here is what they would write with
//! cudarc; every call maps to a CUDA runtime call, named in its doc comment.
//!
//! ```no_run
//! use gpubook::gpu::*;
//! # fn main() -> gpubook::gpu::Result<()> {
//! let gpu = Gpu::new()?;                       // CUDA device 0 if usable, else the emulator
//! let stream = gpu.default_stream();
//! let a = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
//! let b = stream.clone_htod(&[10.0f32, 20.0, 30.0])?;
//! let mut c = stream.alloc_zeros::<f32>(3)?;
//! let module = gpu.load_module(Source::text("add.cu", r#"
//!     extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
//!         int i = blockIdx.x * blockDim.x + threadIdx.x;
//!         if (i < n) c[i] = a[i] + b[i];
//!     }"#))?;
//! let f = module.load_function("add")?;
//! let n = 3i32;
//! let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
//! let mut launch = stream.launch_builder(&f);
//! launch.arg(&a).arg(&b).arg(&mut c).arg(&n);
//! // SAFETY: a, b and c hold 3 floats and the kernel's i < n guard keeps the 32 threads inside them.
//! unsafe { launch.launch(cfg) }?;
//! assert_eq!(stream.clone_dtoh(&c)?, vec![11.0, 22.0, 33.0]);
//! # Ok(()) }
//! ```
//!
//! # Layers
//!
//! Each file uses only files of its own layer or below, and no two files use each other
//! (`import_graph.rs` at the crate root tests both). A method that belongs to a higher layer lives
//! there as an `impl` block: `Gpu::default_stream` in stream.rs, `Gpu::load_module` in
//! function.rs, `Stream::launch_builder` in launch.rs.
//!
//! ```text
//! launch and module loading   function.rs (Module, Function)  launch.rs (LaunchArgs, the checks)
//! memory, streams, events     memory.rs  strided.rs  host.rs  mapped.rs  event.rs  stream.rs
//! the context                 context.rs (Gpu, GpuInner, the trace log)  ordering.rs
//! the backend seam            backend.rs (the Backend trait)  cuda.rs  emu.rs
//!                             select.rs (which backend: resolve_backend, the one place)
//! plain types and ids         error.rs  ids.rs  info.rs  limits.rs (the launch limits table)
//!                             occupancy.rs (SM limits, the occupancy calculation)
//!                             repr.rs  trace.rs (records)  module.rs (Source, KernelSource)
//!                             toolkit.rs (where the CUDA headers are, for NVRTC)
//!                             warnings.rs (what NVRTC said of a local never set)
//! ```
//!
//! Below the seam a backend sees raw addresses, stream and event ids; everything typed, traced or
//! checked (element types, kernel arguments, launch limits, cross-stream ordering) happens above
//! it, once, so it behaves the same on a GPU and on the emulator.

mod backend;
mod context;
pub(crate) mod cuda;
mod emu;
mod error;
mod event;
mod function;
mod global;
mod host;
mod ids;
mod info;
mod launch;
mod limits;
mod mapped;
mod memory;
mod module;
mod occupancy;
mod ordering;
mod repr;
mod select;
mod stream;
mod strided;
mod toolkit;
mod trace;
mod warnings;

pub use context::Gpu;
pub use error::{GpuError, Result};
pub use event::Event;
pub use function::{Function, Module};
pub use global::Global;
/// Element types of `__half` and `__nv_bfloat16` buffers (the `half` crate's).
pub use half::{bf16, f16};
pub use host::{HostSlice, HostSliceMut, PinnedHostSlice, PinnedView, PinnedViewMut};
pub use ids::{BufferId, HostMem};
pub use info::{BackendKind, DeviceInfo};
pub use launch::{LaunchArgs, PushKernelArg};
pub use limits::LaunchConfig;
pub use mapped::MappedHostSlice;
pub use memory::{DevicePtr, DevicePtrMut, DeviceSlice, DeviceView, DeviceViewMut};
pub use module::{KernelSource, Source};
pub use occupancy::{BlockLimits, BlockResources, FunctionResources, SmLimits, block_limits};
pub use repr::{DeviceRepr, vector};
pub use select::{BACKEND_VAR, BackendChoice, requested_backend, resolve_backend};
pub use stream::Stream;
pub use strided::{StridedView, StridedViewMut};
pub use trace::{
    AccessCounts, BufferAccesses, CopyDir, GlobalAccesses, GlobalRequests, OpKind, SharedAccesses, SharedRequests, ThreadAccesses, Trace,
    TraceOp, Writer, Writers, digest, digest_of,
};

/// Probes for what `gpubook doctor` reports, without creating a device.
pub mod probe {
    pub use super::cuda::{driver_version, probe as cuda, probe_nvrtc as nvrtc};
    pub use super::toolkit::{ToolkitHeaders, toolkit_headers};
}
