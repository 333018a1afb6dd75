//! One error type for the whole GPU API. Every variant reads like a teacher: what happened, and
//! what to do about it. Nothing in `gpubook::gpu` panics on a missing driver, a bad launch or a
//! learner's buggy kernel; it returns one of these.

use std::path::PathBuf;

pub type Result<T, E = GpuError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The backend asked for (or the default one) is not usable on this machine.
    #[error("{backend} backend unavailable: {reason}\n  fix: {fix}")]
    Unavailable { backend: &'static str, reason: String, fix: String },
    /// A CUDA driver call failed.
    #[error("CUDA error in {call}: {message}")]
    Driver { call: &'static str, message: String },
    /// The kernel source did not compile (NVRTC or the emulator's C++ compiler).
    #[error("{}: {message}", location(file, *line))]
    Compile { file: PathBuf, line: Option<u32>, message: String, log: String },
    /// The source uses a CUDA feature the chosen backend cannot run.
    #[error("{}: {feature} is not supported by {backend}", location(file, *line))]
    Unsupported { backend: &'static str, feature: String, file: PathBuf, line: Option<u32> },
    #[error("no kernel named `{name}` in {file}; it defines: {available}")]
    KernelNotFound { name: String, file: PathBuf, available: String },
    /// A name given to `load_function` that does not name exactly one kernel (overloads, a
    /// template without its arguments): the message says what to write.
    #[error("{}: {message}", file.display())]
    KernelName { file: PathBuf, message: String },
    /// The arguments given to a launch do not match the kernel's parameters.
    #[error("launch of `{kernel}`: {message}")]
    Arguments { kernel: String, message: String },
    /// The launch configuration is one the GPU would refuse.
    #[error("invalid launch configuration for `{kernel}`: {message}")]
    LaunchConfig { kernel: String, message: String },
    /// The kernel ran and did something wrong: the emulator's diagnostic (class, what, where,
    /// which thread).
    #[error("{0}")]
    Kernel(Box<gpubook_cudac::Diagnostic>),
    /// Work on two streams touches the same memory with nothing ordering them.
    #[error("cross-stream hazard: {0}")]
    Hazard(String),
    /// A copy or view whose sizes do not fit.
    #[error("{0}")]
    Size(String),
    #[error("out of device memory: asked for {requested} bytes ({detail})")]
    OutOfMemory { requested: usize, detail: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn location(file: &std::path::Path, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("{}:{l}", file.display()),
        None => file.display().to_string(),
    }
}

impl GpuError {
    pub(crate) fn driver(call: &'static str, e: impl std::fmt::Display) -> Self {
        GpuError::Driver { call, message: e.to_string() }
    }
}
