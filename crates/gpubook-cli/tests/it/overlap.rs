//! `gpubook overlap --comm kernel`: the chunk pair with its communication as a kernel on k SMs,
//! as a table, on whichever device the binary finds.

use super::gpubook;
use std::process::Command;

fn overlap(args: &[&str]) -> (bool, String) {
    let out = Command::new(gpubook()).arg("overlap").args(args).output().expect("gpubook runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn the_communication_kernel_sweep_prints_a_row_for_each_k_and_explains_hidden() {
    let (ok, out) = overlap(&["--comm", "kernel", "--n", "4096", "--comm-sms", "1,3"]);
    assert!(ok, "{out}");
    for row in ["| copies |", "| kernel on 1 SM |", "| kernel on 3 SMs |"] {
        assert!(out.contains(row), "`{row}` in:\n{out}");
    }
    assert!(out.contains("\"hidden\": 1 - (time in the pair when no computation ran)"), "{out}");
    let percents: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("| copies") || l.starts_with("| kernel"))
        .map(|l| l.split('|').nth(5).unwrap().trim().trim_end_matches('%').parse().unwrap())
        .collect();
    assert_eq!(percents.len(), 3, "{out}");
    assert!(percents.iter().all(|p| (0.0..=100.0).contains(p)), "{percents:?}");
    if out.contains("emulator") {
        assert!(out.contains("show the code path, not the effect"), "the emulator's rows say what they show: {out}");
    }
}

#[test]
fn bad_communication_settings_are_refused_clearly() {
    let cases: [(&[&str], &str); 3] = [
        (&["--comm", "kernel", "--n", "4096", "--comm-sms", "0"], "between 1 and"),
        (&["--comm", "kernel", "--n", "4097", "--comm-sms", "1"], "multiple of 4"),
        (&["--comm-sms", "4"], "--comm-sms goes with --comm kernel"),
    ];
    for (args, words) in cases {
        let (ok, out) = overlap(args);
        assert!(!ok, "{args:?} should be refused");
        assert!(out.contains(words), "for {args:?}, expected `{words}` in: {out}");
    }
}
