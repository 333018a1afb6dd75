//! gpubook: a teaching book for GPU programming in Rust.
//!
//! - [`gpu`]: the cudarc-shaped API, on a CUDA GPU or on the CPU emulator
//! - [`emu`]: the CPU emulator itself (crate `gpubook-emu`)
//! - [`sim`]: pipeline-parallel schedules and their simulator (crate `gpubook-sim`)
//! - [`chunk_pair`]: one DualPipe chunk pair on two streams (chapter 11, `gpubook overlap`)
//! - [`ep`]: expert parallelism: a world of ranks, symmetric buffers, modelled links (chapters 12-14)
//! - [`viz`]: the figures (thread maps, bandwidth, stream timelines, pipeline charts)

pub mod catalog;
pub mod chunk_pair;
pub mod ep;
pub mod gpu;
pub mod grade;
pub mod overlap;
pub mod paths;
pub mod reference;
pub mod stubs;
pub mod testing;
pub mod viz;

pub use gpubook_emu as emu;
pub use gpubook_sim as sim;
