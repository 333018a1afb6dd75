//! `gpubook moe`: the gate on logits from files (its errors, its JSON, and agreement with an
//! independent numpy port of DeepSeek-V3's gate), and a whole MoE layer on the current device.

use std::path::PathBuf;
use std::process::Command;

/// The gpubook binary cargo built; on a GPU machine, the one scripts/gpu/prepare.sh put in gpu-bin/.
fn gpubook() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_gpubook"));
    if built.exists() { built } else { PathBuf::from("gpu-bin/gpubook") }
}

fn moe(args: &[&str]) -> (bool, String) {
    let out = Command::new(gpubook()).arg("moe").args(args).output().expect("gpubook runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// Writes `logits` and `bias` into a scratch folder; returns their paths.
fn inputs(logits: &str, bias: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (l, b) = (dir.path().join("logits.json"), dir.path().join("bias.json"));
    std::fs::write(&l, logits).unwrap();
    std::fs::write(&b, bias).unwrap();
    (dir, l.display().to_string(), b.display().to_string())
}

fn route(logits: &str, bias: &str, extra: &[&str]) -> (bool, String) {
    let (_dir, l, b) = inputs(logits, bias);
    let mut args = vec!["route", "--logits", &l, "--bias", &b];
    args.extend_from_slice(extra);
    moe(&args)
}

#[test]
fn route_prints_experts_and_weights_as_json() {
    // The research notes' worked example: 4 nodes of 2 experts, top-4 of at most 2 nodes.
    let logits = "[[2.1972, -2.1972, 0.4055, 0.2007, 1.3863, -2.9444, 0.0, -0.2007]]";
    let (ok, out) = route(logits, "[0,0,0,0,0,0,0,0]", &["--groups", "4", "--topk-groups", "2", "--topk", "4", "--json"]);
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(v["experts"], serde_json::json!([[0, 2, 3, 1]]));
    let w: f64 = v["weights"][0].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum();
    assert!((w - 1.0).abs() < 1e-6, "weights sum to the route scale (1): {w}");
}

#[test]
fn route_refuses_bad_input_clearly() {
    let cases: [(&str, &str, &[&str], &str); 5] = [
        ("[[1, 2, 3], [1, 2]]", "[0, 0, 0]", &["--groups", "1", "--topk-groups", "1", "--topk", "1"], "row 1 has 2 logits but row 0 has 3"),
        ("[[1, 2, 3]]", "[0, 0, 0]", &["--groups", "2", "--topk-groups", "1", "--topk", "1"], "cannot be split into 2 groups"),
        ("[[1, 2, 3, 4]]", "[0, 0, 0, 0]", &["--groups", "2", "--topk-groups", "1", "--topk", "3"], "more than the 2 experts left"),
        ("[[1, 2]]", "[0]", &["--groups", "1", "--topk-groups", "1", "--topk", "1"], "1 biases for 2 experts"),
        ("{\"not\": 1}", "[0]", &["--groups", "1", "--topk-groups", "1", "--topk", "1"], "must be an array of rows"),
    ];
    for (logits, bias, args, words) in cases {
        let (ok, out) = route(logits, bias, args);
        assert!(!ok, "{logits} should be refused");
        assert!(out.contains(words), "for {logits}, expected `{words}` in: {out}");
    }
}

#[test]
fn route_agrees_with_an_independent_numpy_port() {
    let has_numpy = Command::new("python3").args(["-c", "import numpy"]).output().map(|o| o.status.success()).unwrap_or(false);
    if !has_numpy {
        println!("SKIPPED route_agrees_with_an_independent_numpy_port: python3 with numpy is not installed");
        return;
    }
    let script = gpubook::testing::workspace_file("scripts/moe/check_gate.py");
    let out = Command::new("python3").arg(&script).arg(gpubook()).output().expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("agree")).count(), 6, "{text}");
}

#[test]
fn run_matches_the_dense_layer_within_1e_4() {
    if gpubook::testing::device_or_skip("run_matches_the_dense_layer_within_1e_4").is_none() {
        return;
    }
    let args = [
        "run",
        "--nodes",
        "2",
        "--gpus-per-node",
        "2",
        "--tokens",
        "33",
        "--hidden",
        "24",
        "--experts",
        "8",
        "--topk",
        "3",
        "--limit-nodes",
        "1",
        "--channels",
        "3",
        "--seed",
        "5",
    ];
    let (ok, out) = moe(&args);
    assert!(ok, "{out}");
    assert!(out.contains("ok (≤ 1e-4)") && out.contains("links are modelled") && out.contains("dispatch_rdma"), "{out}");
    let (ok, out) = moe(&[
        "run",
        "--nodes",
        "2",
        "--gpus-per-node",
        "2",
        "--tokens",
        "4",
        "--hidden",
        "8",
        "--experts",
        "6",
        "--topk",
        "2",
        "--limit-nodes",
        "1",
        "--channels",
        "1",
        "--seed",
        "1",
    ]);
    assert!(!ok && out.contains("cannot be shared equally by 4 ranks"), "{out}");
}
