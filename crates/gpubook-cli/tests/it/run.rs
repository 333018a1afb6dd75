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

fn counts_cu() -> String {
    gpubook::testing::workspace_file("crates/gpubook-emu/tests/kernels/counts.cu").display().to_string()
}

#[test]
fn check_mode_prints_the_memory_traffic() {
    // The naive transpose of tests/access_counts.rs: 128 warps, each storing a column.
    let args = ["--kernel", "transpose_naive", "--grid", "2,2", "--block", "32,32", "--mode", "check"];
    let (ok, out) = gpubook_run(
        &[&[counts_cu().as_str()][..], &args, &["--arg", "f32[4096]:iota", "--arg", "f32[4096]:uninit", "--arg", "i32=64"]].concat(),
    );
    assert!(ok, "{out}");
    assert!(out.contains("memory traffic"), "{out}");
    // The first "loads" and "stores" rows are global memory's: requests, bytes, sectors, per request.
    let row = |name: &str| -> Vec<String> {
        let line = out.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("no {name} row:\n{out}"));
        line.split_whitespace().map(String::from).collect()
    };
    assert_eq!(row("loads")[1..5], ["128", "16384", "512", "4.00"], "{out}");
    assert_eq!(row("stores")[1..5], ["128", "16384", "4096", "32.00"], "{out}");
    assert!(out.lines().any(|l| l.trim_start().starts_with("in ") && l.contains("128 / 512")), "{out}");
}

#[test]
fn numbers_that_do_not_fit_and_buffers_too_big_are_refused() {
    let (ok, out) =
        gpubook_run(&[&zoo(), "--kernel", "ok_scale", "--mode", "check", "--arg", "f32[10]", "--arg", "f32[10]", "--arg", "i32=3e9"]);
    assert!(!ok);
    assert!(out.contains("3000000000 is out of range for i32"), "{out}");
    // 80 GB of f32: more than the emulated device's memory, refused before anything is allocated.
    let (ok, out) = gpubook_run(&[
        &zoo(),
        "--kernel",
        "ok_scale",
        "--mode",
        "check",
        "--arg",
        "f32[20000000000]:ones",
        "--arg",
        "f32[10]",
        "--arg",
        "i32=10",
    ]);
    assert!(!ok);
    assert!(out.contains("`f32[20000000000]:ones` needs 74.51 GiB (80000000000 bytes) of device memory"), "{out}");
}

#[test]
fn an_os_error_is_said_once() {
    let (ok, out) = gpubook_run(&["/nonexistent/k.cu", "--kernel", "k", "--mode", "check"]);
    assert!(!ok);
    assert_eq!(out.matches("No such file or directory").count(), 1, "{out}");
}
