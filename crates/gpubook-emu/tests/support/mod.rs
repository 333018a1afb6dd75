//! What the emulator's test files share: they name their kernels as `tests/kernels/...`, relative
//! to this crate's folder (where cargo runs them), and a test binary built in one folder may run
//! from another (the GPU script copies them). `in_crate_dir` makes the crate's folder on this
//! machine the working directory first.

use std::path::{Path, PathBuf};
use std::sync::Once;

/// This crate's folder on the machine the test runs on: where it was built, else below
/// `GPUBOOK_ROOT` or a folder above the working directory.
pub fn crate_dir() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if built.is_dir() {
        return built;
    }
    let here = std::env::current_dir().unwrap_or_default();
    let roots = std::env::var_os("GPUBOOK_ROOT").map(PathBuf::from).into_iter().chain(here.ancestors().map(Path::to_path_buf));
    for root in roots {
        let dir = root.join("crates/gpubook-emu");
        if dir.join("tests/kernels").is_dir() {
            return dir;
        }
    }
    panic!("cannot find crates/gpubook-emu from {}: set GPUBOOK_ROOT to the checkout", here.display())
}

/// Makes [`crate_dir`] the working directory, once.
pub fn in_crate_dir() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::env::set_current_dir(crate_dir()).expect("entering the crate's folder"));
}

/// Cargo's scratch folder for tests where it exists, else the system's (a binary run elsewhere).
#[allow(dead_code)] // not every test file needs one
pub fn scratch() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if built.is_dir() { built } else { std::env::temp_dir() }
}
