//! gpubook: a teaching book for GPU programming in Rust. This is the library the learner's crate
//! and the notebooks program against: the GPU API and the structures the exercises drive,
//! nothing of the course (graders, catalog, progress: `gpubook-course`) or the labs (figures,
//! benches, host references: `gpubook-labs`).
//!
//! - [`gpu`]: the cudarc-shaped API, on a CUDA GPU or on the CPU emulator (layered: see its docs)
//! - [`ep`]: expert parallelism: a world of ranks, symmetric buffers, modelled links (chapters 12-14)
//! - [`chunk_pair`]: one DualPipe chunk pair on two streams (chapter 11)
//! - [`sim`]: pipeline-parallel schedules and their simulator (crate `gpubook-sim`)
//! - [`cudac`]: the CUDA C front end (crate `gpubook-cudac`); [`emu`]: the CPU emulator
//!   (crate `gpubook-emu`)
//! - [`reference`](mod@reference): marks reference code, so graders can refuse an answer that
//!   calls it
//! - [`paths`]: where things are; [`testing`]: tests that need a device; [`sync`]: the lock policy

pub mod chunk_pair;
pub mod ep;
pub mod gpu;
pub mod paths;
pub mod reference;
pub mod sync;
pub mod testing;

pub use gpubook_cudac as cudac;
pub use gpubook_emu as emu;
pub use gpubook_sim as sim;
