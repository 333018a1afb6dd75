//! `gpubook` with no command: the device in use.

use gpubook::gpu::Gpu;
use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    match Gpu::new() {
        Ok(gpu) => {
            println!("gpubook: running on");
            print!("{}", gpu.info());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("gpubook: no device to run on.\n{e}\n(`gpubook doctor` says what was found)");
            Ok(ExitCode::FAILURE)
        }
    }
}
