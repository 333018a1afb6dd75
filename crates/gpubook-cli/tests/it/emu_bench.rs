//! `gpubook emu-bench`: one row measured for real, with the emulator and the native baseline side
//! by side, and the ratios it prints are the ratios of the figures it prints.

use super::gpubook;
use std::process::Command;

fn emu_bench(args: &[&str]) -> (bool, String) {
    let out = Command::new(gpubook()).arg("emu-bench").args(args).env("GPUBOOK_BACKEND", "emu").output().expect("gpubook runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn one_row_prints_both_modes_both_baselines_and_their_ratios() {
    let (ok, out) = emu_bench(&["--reps", "1", "--only", "vector_add (65536)"]);
    assert!(ok, "{out}");
    let row = out.lines().find(|l| l.starts_with("vector_add (65536)")).unwrap_or_else(|| panic!("no row in:\n{out}"));
    let cells: Vec<&str> = row["vector_add (65536)".len()..].split_whitespace().collect();
    let num = |i: usize| cells[i].trim_end_matches('x').parse::<f64>().unwrap_or_else(|_| panic!("cell {i} of `{row}`"));
    let (check, engine, fast, native, native1) = (num(0), num(1), num(2), num(3), num(4));
    assert!([check, engine, fast, native, native1].iter().all(|t| *t > 0.0), "{row}");
    // The ratio columns are fast/native, check/native and engine/native on 1 thread, of the unrounded times:
    // allow for the times' rounding to 6 decimals and the ratio's to 1.
    let near = |printed: f64, a: f64, b: f64| (printed - a / b).abs() <= (a / b) * (0.5e-6 / a + 0.5e-6 / b) + 0.05;
    assert!(near(num(5), fast, native), "fast/native in `{row}`");
    assert!(near(num(6), check, native1), "check/native 1t in `{row}`");
    assert!(near(num(7), engine, native1), "engine/native 1t in `{row}`");
    assert_eq!(out.lines().filter(|l| l.starts_with("vector_add")).count(), 1, "--only keeps one row:\n{out}");
    assert!(out.contains("every kernel above: check mode up to "), "{out}");
    assert!(out.contains("fast mode, which checks nothing, up to "), "{out}");
    assert!(out.contains("floor: check mode's engine with every access check off is up to "), "{out}");
}

#[test]
fn a_row_name_that_matches_nothing_is_refused_with_the_rows() {
    let (ok, out) = emu_bench(&["--only", "transpose"]);
    assert!(!ok, "{out}");
    assert!(out.contains("matches no row") && out.contains("matmul_tiled (128x128)"), "{out}");
}
