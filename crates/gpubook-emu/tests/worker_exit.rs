//! A worker that reported a fault from its signal handler exits right after the reply: the next
//! launch must start a fresh worker, not send its updates to one that is exiting. On a loaded
//! machine the worker may still be alive when the host looks (the bug zoo once failed with
//! "updating the worker (`FREE`): it exited with status 70"); GPUBOOK_EMU_EXIT_DELAY_MS makes it
//! linger on purpose. A test binary of its own: the variable reaches every worker it starts.

mod support;

use gpubook_cudac::DiagClass;
use gpubook_emu::{EmuConfig, EmuDevice, EmuError, KernelSource, LaunchSpec, Mode};

#[test]
fn after_a_fault_in_fast_mode_the_next_launch_gets_a_fresh_worker() {
    // SAFETY: the first thing this binary's only test does, before any thread reads the environment.
    unsafe { std::env::set_var("GPUBOOK_EMU_EXIT_DELAY_MS", "700") };
    let mut config = EmuConfig::from_env();
    config.cache_dir = support::scratch().join("gpubook-cache");
    let dev = EmuDevice::new(0, config).expect("device");
    support::in_crate_dir();
    let faults = dev.load_module(&KernelSource::from_file("tests/kernels/faults.cu").unwrap()).unwrap();
    let fast = LaunchSpec { grid: [1, 1, 1], block: [1, 1, 1], shared_mem_bytes: 0, mode: Some(Mode::Fast) };
    let p = dev.alloc(4, 4, "p").unwrap();
    let args = [p.to_le_bytes().to_vec(), 1i32.to_le_bytes().to_vec()];
    match dev.launch(&faults, "far_past_the_end", &fast, &args) {
        Err(EmuError::Kernel(d)) => assert_eq!(d.class, DiagClass::OutOfBounds, "{d}"),
        other => panic!("expected an out-of-bounds report, got {other:?}"),
    }
    // Something for the next launch to tell the worker first.
    let q = dev.alloc(64, 4, "q").unwrap();
    dev.free(q).unwrap();
    dev.launch(&faults, "hello", &fast, &[7i32.to_le_bytes().to_vec()]).expect("the next launch runs on a fresh worker");
}
