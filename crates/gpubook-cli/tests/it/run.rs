//! `gpubook run`: one kernel launched from the command line, its diagnostics and output summary.

use super::gpubook;
use std::process::Command;

fn gpubook_run(args: &[&str]) -> (bool, String) {
    let out = Command::new(gpubook()).arg("run").args(args).output().expect("gpubook runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

fn zoo() -> String {
    gpubook::testing::workspace_file("crates/gpubook/tests/kernels/zoo.cu").display().to_string()
}

#[test]
fn a_correct_kernel_runs_and_its_buffers_are_summarised() {
    if gpubook::testing::device_or_skip("a_correct_kernel_runs_and_its_buffers_are_summarised").is_none() {
        return;
    }
    let (ok, out) = gpubook_run(&[
        &zoo(),
        "--kernel",
        "ok_scale",
        "--grid",
        "8",
        "--block",
        "128",
        "--arg",
        "f32[1000]:uninit",
        "--arg",
        "f32[1000]:iota",
        "--arg",
        "i32=1000",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("launched grid (8, 1, 1) × block (128, 1, 1): ok"), "{out}");
    assert!(out.contains("[0.0, 2.0, 4.0, 6.0,"), "{out}");
    assert!(out.contains("min 0, max 1998, sum 999000"), "{out}");
}

#[test]
fn a_buggy_kernel_is_diagnosed_in_check_mode() {
    let (ok, out) = gpubook_run(&[
        &zoo(),
        "--kernel",
        "bug_no_guard",
        "--grid",
        "8",
        "--block",
        "128",
        "--mode",
        "check",
        "--arg",
        "f32[1000]:uninit",
        "--arg",
        "f32[1000]:iota",
        "--arg",
        "i32=1000",
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains("out of bounds: thread (104,0,0) of block (7,0,0)"), "{out}");
    assert!(out.contains("zoo.cu:14"), "{out}");
    // The parameter's own name labels the buffer in the diagnostic.
    assert!(out.contains("in[1000]") || out.contains("out[1000]"), "{out}");
}

#[test]
fn bad_arguments_are_explained() {
    let (ok, out) = gpubook_run(&[&zoo(), "--kernel", "ok_scale", "--mode", "check", "--arg", "f32[10]:sideways"]);
    assert!(!ok);
    assert!(out.contains("is not zeros, ones, iota, random, uninit or a number"), "{out}");
}
