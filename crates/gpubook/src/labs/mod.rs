//! Labs: programs the chapters measure and draw, built on the GPU API like a learner's code and
//! run by graders, the book's figures and `gpubook` subcommands.
//!
//! - [`overlap`]: the streams designs of chapters 7-9 measured side by side (`gpubook streams-bench`)
//! - [`channels`]: chapter 14's channel sweep and SM sharing (`gpubook moe channels`)
//! - [`chunk_pair`]: one DualPipe chunk pair on two streams (chapter 11, `gpubook overlap`)
//! - [`counted`]: what the emulator counts, for chapters 5-6's figures (sectors, banks, scan work)
//! - [`perf`]: chapters 5-6's variants against the copy, and the roofline (`gpubook perf-bench`)

pub mod channels;
pub mod chunk_pair;
pub mod counted;
pub mod overlap;
pub mod perf;
pub mod roofline;
