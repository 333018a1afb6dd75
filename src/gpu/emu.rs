//! The CPU emulator backend (crate `gpubook-emu`) behind the same API.

use super::backend::Backend;
use super::error::{GpuError, Result};

pub(crate) fn new_backend(_ordinal: usize) -> Result<Box<dyn Backend>> {
    Err(GpuError::Unavailable {
        backend: "emulator",
        reason: "the CPU emulator is not available yet".into(),
        fix: "run on a CUDA GPU (GPUBOOK_BACKEND=cuda)".into(),
    })
}

pub(crate) fn device_count() -> usize {
    0
}

pub(crate) fn device_of(_b: &dyn Backend) -> Option<&dyn std::any::Any> {
    None
}
