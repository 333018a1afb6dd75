//! Which backend a `Gpu` runs on, decided in this one place: `GPUBOOK_BACKEND=cuda|emu` forces
//! one; unset, CUDA when a device answers, else the CPU emulator. `Gpu::new`, `Gpu::device_count`,
//! `gpubook doctor` and the book's figure cache all ask [`resolve_backend`].

use super::backend::Backend;
use super::error::{GpuError, Result};
use super::info::BackendKind;
use super::{cuda, emu};

pub const BACKEND_VAR: &str = "GPUBOOK_BACKEND";

/// `Some` when `GPUBOOK_BACKEND` forces a backend, `None` for "whichever works".
pub fn requested_backend() -> Result<Option<BackendKind>> {
    match std::env::var(BACKEND_VAR).ok().as_deref().map(str::trim) {
        None | Some("") | Some("auto") => Ok(None),
        Some("cuda") | Some("gpu") => Ok(Some(BackendKind::Cuda)),
        Some("emu") | Some("emulator") | Some("cpu") => Ok(Some(BackendKind::Emulator)),
        Some(other) => Err(GpuError::Unavailable {
            backend: "requested",
            reason: format!("{BACKEND_VAR}={other} names no backend"),
            fix: format!("set {BACKEND_VAR} to `cuda`, `emu`, or leave it unset to pick automatically"),
        }),
    }
}

/// The backend `Gpu::new` would open now, and why; opens no device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendChoice {
    pub kind: BackendKind,
    /// One line for people: `GPUBOOK_BACKEND=emu`, or why CUDA was not used.
    pub why: String,
}

/// Resolves the backend: forced by `GPUBOOK_BACKEND`, else CUDA when a device answers, else the
/// emulator. An unknown `GPUBOOK_BACKEND` value is an error.
pub fn resolve_backend() -> Result<BackendChoice> {
    Ok(match requested_backend()? {
        Some(kind) => BackendChoice { kind, why: format!("{BACKEND_VAR}={}", std::env::var(BACKEND_VAR).unwrap_or_default().trim()) },
        None => match cuda::probe() {
            Ok(n) => BackendChoice { kind: BackendKind::Cuda, why: format!("{BACKEND_VAR} unset and {n} CUDA device(s) answer") },
            Err(e) => {
                BackendChoice { kind: BackendKind::Emulator, why: format!("{BACKEND_VAR} unset and no CUDA device: {}", first_line(&e)) }
            }
        },
    })
}

fn first_line(e: &GpuError) -> String {
    match e {
        GpuError::Unavailable { reason, .. } => reason.clone(),
        other => other.to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// Opens device `ordinal` on the resolved backend.
pub(crate) fn open_backend(ordinal: usize) -> Result<Box<dyn Backend>> {
    match resolve_backend()?.kind {
        BackendKind::Cuda => Ok(Box::new(cuda::CudaBackend::new(ordinal)?)),
        BackendKind::Emulator => emu::new_backend(ordinal),
    }
}

/// How many devices the resolved backend offers.
pub(crate) fn device_count() -> Result<usize> {
    match resolve_backend()?.kind {
        BackendKind::Cuda => cuda::probe(),
        BackendKind::Emulator => Ok(emu::device_count()),
    }
}
