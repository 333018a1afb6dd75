//! Labs: programs the chapters measure and draw, built on the GPU API like a learner's code and
//! run by graders, the book's figures and `gpubook` subcommands.
//!
//! - [`overlap`]: the streams designs of chapters 7-9 measured side by side (`gpubook streams-bench`)
//! - [`chunk_pair`]: one DualPipe chunk pair on two streams (chapter 11, `gpubook overlap`)

pub mod chunk_pair;
pub mod overlap;
