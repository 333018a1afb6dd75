//! `gpubook doctor`: each thing gpubook needs, whether it was found, and how to fix it if not.

use gpubook::gpu::{BACKEND_VAR, Gpu, probe, resolve_backend};
use std::process::{Command, ExitCode};

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
    match cxx() {
        Some((path, version)) => println!("{:<16} ok: {path} ({version})", "C++ compiler"),
        None => println!(
            "{:<16} not found (the emulator compiles kernels with it)\n  fix: install g++ (apt-get install g++) or set CXX",
            "C++ compiler"
        ),
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

/// The compiler the emulator would use: $CXX, else c++, g++, clang++.
fn cxx() -> Option<(String, String)> {
    let candidates = std::env::var("CXX").ok().into_iter().chain(["c++", "g++", "clang++"].map(String::from));
    for c in candidates {
        if let Ok(out) = Command::new(&c).arg("--version").output()
            && out.status.success()
        {
            let first = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string();
            return Some((c, first));
        }
    }
    None
}
