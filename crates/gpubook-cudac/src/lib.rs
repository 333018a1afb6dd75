//! gpubook's CUDA C front end, shared by both backends: the tokenizer ([`lex`]), kernel
//! signatures read from the text ([`signature`]: what a launch's arguments are checked
//! against), declarations ([`decl`]), what a source shows that is legal but most likely a bug
//! ([`findings`]), and the words a kernel bug is reported in ([`diagnostic`]).
//!
//! The CUDA backend and the emulator both depend on this crate and neither on the other: a
//! type that both must name lives here.

pub mod decl;
pub mod diagnostic;
pub mod findings;
pub mod lex;
pub mod signature;

pub use diagnostic::{DiagClass, Diagnostic};
pub use findings::{Finding, same_file, source_findings};
pub use signature::{KernelLookupError, KernelRef, KernelSignature, Param, find_kernel, parse_kernels};
