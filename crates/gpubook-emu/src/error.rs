//! What can go wrong, worded for a learner. A kernel bug becomes a `Diagnostic` that names the
//! CUDA thread, the buffer and the line; everything else is an `EmuError` with its context.

use gpubook_cudac::Diagnostic;
use std::path::PathBuf;

/// Everything the emulator can fail with.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The kernel source did not compile. `message` is the compiler's first error, `log` a
    /// short excerpt of its output with the learner's file names.
    #[error("{}: error: {message}\n{log}", location(file, *line))]
    Compile { file: PathBuf, line: Option<u32>, message: String, log: String },
    /// The kernel uses CUDA that the emulator does not model.
    #[error(
        "{}: {feature} is not supported by the gpubook CPU emulator; \
         run on a GPU (GPUBOOK_BACKEND=cuda) or write the kernel without it",
        location(file, Some(*line))
    )]
    Unsupported { feature: String, file: PathBuf, line: u32 },
    /// A bug in the kernel, found while running it.
    #[error("{0}")]
    Kernel(Diagnostic),
    /// No usable C++ compiler: the emulator compiles kernels with one.
    #[error("the gpubook emulator needs a C++ compiler: {0}")]
    NoCompiler(String),
    /// The worker process misbehaved in a way that is not the kernel's fault.
    #[error("the emulator's worker process failed: {0}")]
    Worker(String),
    /// A host-side memory operation was invalid (unknown address, out of a buffer, double free).
    #[error("{0}")]
    Memory(String),
    /// An operating-system call failed; `context` says what we were doing.
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

impl EmuError {
    /// An `Io` error with what we were doing.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> EmuError {
        EmuError::Io { context: context.into(), source }
    }

    /// The diagnostic, when this is a kernel bug.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            EmuError::Kernel(d) => Some(d),
            _ => None,
        }
    }
}

fn location(file: &std::path::Path, line: Option<u32>) -> String {
    match line {
        Some(line) => format!("{}:{line}", file.display()),
        None => file.display().to_string(),
    }
}

/// `.map_err(io_context("reading x"))`.
pub(crate) fn io_context<C: Into<String>>(context: C) -> impl FnOnce(std::io::Error) -> EmuError {
    move |e| EmuError::io(context, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file() {
        let e = EmuError::Unsupported { feature: "cooperative groups".into(), file: "k.cu".into(), line: 3 };
        assert!(e.to_string().starts_with("k.cu:3: cooperative groups is not supported"), "{e}");
        let e = EmuError::Compile { file: "k.cu".into(), line: Some(4), message: "expected ';'".into(), log: String::new() };
        assert!(e.to_string().starts_with("k.cu:4: error: expected ';'"), "{e}");
    }
}
