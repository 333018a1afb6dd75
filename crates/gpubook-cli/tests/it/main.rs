//! The `gpubook` binary end to end, as one test binary.

mod emu_bench;
mod overlap;
mod run;
mod runner;

/// The gpubook binary cargo built; on a GPU machine, where only the binaries travel, the one
/// scripts/gpu/prepare.sh put in gpu-bin/.
fn gpubook() -> std::path::PathBuf {
    let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gpubook"));
    if built.exists() { built } else { std::path::PathBuf::from("gpu-bin/gpubook") }
}
