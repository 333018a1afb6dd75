//! Helpers for tests that need a device: they run on whichever backend `Gpu::new` picks and
//! skip, saying why, when there is none. A skip is printed, never counted as a pass.

use crate::gpu::Gpu;

/// The device to test on, or `None` after printing why the test is skipped.
pub fn device_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new() {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("SKIPPED {test}: no device: {e}");
            None
        }
    }
}

/// The workspace root on the machine the test runs on (see [`workspace_file`]).
pub fn root() -> std::path::PathBuf {
    crate::paths::relocate(crate::paths::build_root())
}

/// A file of the workspace, by its path from the root, on the machine the test runs on (test
/// binaries built in one folder may run in another: the GPU script does that).
pub fn workspace_file(rel: &str) -> std::path::PathBuf {
    crate::paths::relocate(&crate::paths::build_root().join(rel))
}
