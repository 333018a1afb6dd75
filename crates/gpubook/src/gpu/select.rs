//! Which backend `Gpu::new` uses: `GPUBOOK_BACKEND=cuda|emu`, or the first that works.

use super::error::{GpuError, Result};
use super::info::BackendKind;

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
