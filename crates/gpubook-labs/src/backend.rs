//! How the labs name the device their numbers came from, in the figures and the reports alike.

use gpubook::gpu::{BackendKind, Gpu};

/// Where a figure's numbers came from, in words: "the CPU emulator" or "NVIDIA H200 (CUDA)".
pub fn backend_label(gpu: &Gpu) -> String {
    match gpu.backend() {
        BackendKind::Emulator => "the CPU emulator".to_string(),
        BackendKind::Cuda => format!("{} (CUDA)", gpu.info().name),
    }
}
