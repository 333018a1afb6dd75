//! gpubook: a teaching book for GPU programming in Rust.
//!
//! - [`gpu`]: the cudarc-shaped API, on a CUDA GPU or on the CPU emulator
//! - [`emu`]: the CPU emulator itself (crate `gpubook-emu`)
//! - [`sim`]: pipeline-parallel schedules and their simulator (crate `gpubook-sim`)

pub mod catalog;
pub mod grade;
pub mod gpu;
pub mod stubs;
pub mod testing;

pub use gpubook_emu as emu;
pub use gpubook_sim as sim;
