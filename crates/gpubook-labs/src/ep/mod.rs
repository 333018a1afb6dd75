//! Expert parallelism's labs (chapters 12-14): the host references the graders and `gpubook moe`
//! check against ([`reference`]), the MoE layer's kernels and a whole layer across ranks
//! ([`moe::run`]), and the node-limit study of chapter 13 ([`study`]). The world, the buffers
//! and the types the exercises use are gpubook's `ep`.

mod config;
mod kernels;
pub mod moe;
pub mod reference;
pub mod study;

pub use reference::HostRouting;
