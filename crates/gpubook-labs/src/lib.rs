//! gpubook's labs: programs the chapters measure and draw, built on the GPU API like a learner's
//! code, and run by graders, the book's figures, the notebooks and `gpubook` subcommands. The
//! learner's crate does not depend on this crate, so an answer cannot call what a grader
//! compares it with.
//!
//! - [`ep`]: expert parallelism's host references (gate, dense MoE, traffic), the kernels of
//!   `gpubook moe` and its whole MoE layer
//! - [`overlap`]: the streams designs of chapters 7-9 measured side by side (`gpubook streams-bench`)
//! - [`chunk_pair`]: chapter 11's chunk pair measured (`gpubook overlap`)
//! - [`channels`]: chapter 14's channel sweep and SM sharing (`gpubook moe channels`)
//! - [`counted`]: what the emulator counts, for chapters 5-6's figures (sectors, banks, scan work)
//! - [`perf`], [`roofline`]: chapters 5-6's variants against the copy, and the roofline
//!   (`gpubook perf-bench`)
//! - [`viz`]: the figures (thread maps, bandwidth, stream timelines, pipeline charts)
//! - [`launch_spec`]: launches described as text (`gpubook run`, the fidelity suite)
//! - [`backend`]: how a figure or report names the device its numbers came from
//! - [`rng`]: the seeded generator every lab and grader draws inputs from
//! - [`solutions`]: the chapters' own kernels, which the labs run rather than copies

pub mod backend;
pub mod channels;
pub mod chunk_pair;
pub mod counted;
pub mod ep;
pub mod launch_spec;
pub mod overlap;
pub mod perf;
pub mod rng;
pub mod roofline;
pub mod solutions;
pub mod viz;
