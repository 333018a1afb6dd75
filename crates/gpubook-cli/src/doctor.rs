//! `gpubook doctor`: each thing gpubook needs, whether it was found, and how to fix it if not.

use gpubook::gpu::{BACKEND_VAR, Gpu, probe, resolve_backend};
use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    println!("gpubook doctor\n");
    let requested = std::env::var(BACKEND_VAR).unwrap_or_default();
    let shown = if requested.is_empty() { "(unset: CUDA if a device answers, else the emulator)" } else { &requested };
    println!("{BACKEND_VAR:<16} {shown}");
    // The same decision Gpu::new makes (and the book's figure cache keys on).
    match resolve_backend() {
        Ok(choice) => println!("{:<16} {} ({})", "backend", choice.kind, choice.why),
        Err(e) => println!("  ! {e}"),
    }

    match probe::cuda() {
        Ok(n) => {
            let v = probe::driver_version().unwrap_or(0);
            println!("{:<16} ok: CUDA {}.{}, {n} device(s)", "CUDA driver", v / 1000, v % 1000 / 10);
        }
        Err(e) => println!("{:<16} not usable: {e}", "CUDA driver"),
    }
    match probe::nvrtc() {
        Ok((a, b)) => println!("{:<16} ok: {a}.{b}", "NVRTC"),
        Err(e) => println!("{:<16} not usable: {e}", "NVRTC"),
    }
    // NVRTC's include path for cuda_fp16.h, cooperative_groups.h & co.
    match probe::toolkit_headers() {
        Ok(h) => println!("{:<16} ok: {} (found by {})", "CUDA headers", h.dirs[0].display(), h.found_by),
        Err(e) => println!("{:<16} not found (kernels that include cuda_fp16.h & co. fail on a GPU): {e}", "CUDA headers"),
    }
    // The emulator's own probe: finding the compiler and building its worker with it, so this
    // says "ok" exactly when the emulator can start.
    match gpubook::emu::probe_compiler(&gpubook::emu::EmuConfig::from_env()) {
        Ok(c) => {
            println!("{:<16} ok: {} ({}), the emulator's worker builds", "C++ compiler", c.cxx.display(), c.version);
            if !c.pattern_init {
                println!(
                    "{:<16} check mode cannot fill uninitialised locals with a pattern (needs g++ 12 or clang 8): \
                     a kernel that reads one gives numbers that change from run to run",
                    ""
                );
            }
            match &c.check_pass {
                Ok(p) => println!("{:<16} ok: {} (check mode's compiler pass)", "check pass", p.display()),
                Err(why) => println!(
                    "{:<16} not used: {why}; check mode calls ThreadSanitizer's hooks for every access instead                      (same reports, slower)",
                    "check pass"
                ),
            }
        }
        Err(e) => println!("{:<16} not usable (the emulator compiles kernels with it): {e}", "C++ compiler"),
    }

    println!();
    match Gpu::new() {
        Ok(gpu) => {
            println!("Gpu::new() uses:");
            print!("{}", gpu.info());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("Gpu::new() fails:\n  {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
