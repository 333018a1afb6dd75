//! gpubook's CPU emulator: runs NVRTC-dialect CUDA C on the CPU and explains what went wrong.
//!
//! ```no_run
//! use gpubook_emu::{EmuConfig, EmuDevice, KernelSource, LaunchSpec};
//! # fn main() -> Result<(), gpubook_emu::EmuError> {
//! let dev = EmuDevice::new(0, EmuConfig::from_env())?;
//! let module = dev.load_module(&KernelSource::from_file("kernels/ch03/vector_add.cu")?)?;
//! let n = 1000usize;
//! let (a, b, c) = (dev.alloc(4 * n, 4, "a")?, dev.alloc(4 * n, 4, "b")?, dev.alloc(4 * n, 4, "c")?);
//! // ... dev.write(a, bytes_of_a) ...
//! let spec = LaunchSpec { grid: [n.div_ceil(256) as u32, 1, 1], block: [256, 1, 1], shared_mem_bytes: 0, mode: None };
//! let args = [a.to_le_bytes().to_vec(), b.to_le_bytes().to_vec(), c.to_le_bytes().to_vec(), (n as i32).to_le_bytes().to_vec()];
//! dev.launch(&module, "vector_add", &spec, &args)?; // Err(EmuError::Kernel(..)) names thread, buffer and line
//! # Ok(()) }
//! ```
//!
//! See DESIGN.md next to this crate for how the pieces fit: `arena` (device memory shared with
//! the worker), `source` (the rewrite), `compile` (the C++ compiler and its cache), `worker`
//! (the process kernels run in), `symbolize` (pc → file:line), `device` (the API above).

mod arena;
mod check_pass;
mod compile;
mod config;
mod counts;
mod device;
mod error;
mod source;
mod symbolize;
mod uninitialized;
mod worker;

pub use arena::BufferInfo;
pub use compile::{Compiler, fast_mode_flags, probe_compiler};
pub use config::{EmuConfig, Mode};
pub use counts::{AccessCounts, BufferAccesses, GlobalAccesses, GlobalRequests, SharedAccesses, SharedRequests, ThreadAccesses, Writers};
pub use device::{EmuDevice, EmuInfo, EmuModule, KernelSource, LaunchSpec, LaunchStats};
pub use error::EmuError;
