//! gpubook: a teaching book for GPU programming in Rust. This is the library the learner's crate
//! and the notebooks depend on (no CLI, book or server code).
//!
//! - [`gpu`]: the cudarc-shaped API, on a CUDA GPU or on the CPU emulator (layered: see its docs)
//! - [`emu`]: the CPU emulator itself (crate `gpubook-emu`)
//! - [`sim`]: pipeline-parallel schedules and their simulator (crate `gpubook-sim`)
//! - [`grade`]: the hidden graders, one module per chapter; [`reference`](mod@reference) marks
//!   reference code they refuse to accept as an answer
//! - [`catalog`]: `exercises.toml`, the one list of chapters and exercises; [`progress`]: the
//!   learner's progress record; [`notebook`]: exercises checked from a notebook
//! - [`labs`]: programs the chapters measure ([`overlap`], [`chunk_pair`])
//! - [`ep`]: expert parallelism: a world of ranks, symmetric buffers, modelled links (chapters 12-14)
//! - [`viz`]: the figures (thread maps, bandwidth, stream timelines, pipeline charts)
//! - [`launch_spec`]: launches described as text (`gpubook run`, the fidelity suite)
//! - [`paths`]: where things are; [`testing`]: tests that need a device; [`sync`]: the lock policy

pub mod catalog;
pub mod ep;
pub mod gpu;
pub mod grade;
#[cfg(test)]
mod import_graph;
pub mod labs;
pub mod launch_spec;
pub mod notebook;
pub mod paths;
pub mod progress;
pub mod reference;
pub mod sync;
pub mod testing;
pub mod viz;

pub use gpubook_cudac as cudac;
pub use gpubook_emu as emu;
pub use gpubook_sim as sim;

/// The labs under the names exercises, notebooks and the book's pages use.
pub use labs::{chunk_pair, overlap};
