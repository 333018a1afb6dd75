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

/// zoo.cu's `ok_scale` on 1000 elements (`out` uninitialised, `in` = 0, 1, 2 ...), 128 threads a
/// block, on `grid` blocks, then the options in `extra`.
fn ok_scale(grid: &str, extra: &[&str]) -> (bool, String) {
    let zoo = zoo();
    let mut args = vec![zoo.as_str(), "--kernel", "ok_scale", "--grid", grid, "--block", "128"];
    args.extend(["--arg", "f32[1000]:uninit", "--arg", "f32[1000]:iota", "--arg", "i32=1000"]);
    args.extend(extra);
    gpubook_run(&args)
}

#[test]
fn a_correct_kernel_runs_and_its_buffers_are_summarised() {
    if gpubook::testing::device_or_skip("a_correct_kernel_runs_and_its_buffers_are_summarised").is_none() {
        return;
    }
    let (ok, out) = ok_scale("8", &[]);
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
    assert!(out.contains("is not zeros, ones, iota, random, uninit, numbers or a .npy file"), "{out}");
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

fn fidelity(name: &str) -> String {
    gpubook::testing::workspace_file(&format!("crates/gpubook/tests/fidelity/kernels/{name}")).display().to_string()
}

/// Scan, then add the block sums: three launches on the same buffers, the later ones naming
/// them with `@`; the result saved as .npy and read back as the input of another run.
#[test]
fn launches_in_sequence_share_buffers_and_npy_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("out.npy");
    let (ok, out) = gpubook_run(&[
        &fidelity("scan_then_add.cu"),
        "--mode",
        "fast",
        "--kernel",
        "scan_blocks",
        "--grid",
        "8",
        "--block",
        "256",
        "--arg",
        "i32[2048]:ones",
        "--arg",
        "i32[2048]:uninit",
        "--arg",
        "i32[8]:uninit",
        "--then",
        "scan_sums grid=1 block=8 @sums",
        "--then",
        "add_offsets grid=8 block=256 @out @sums",
        "--save",
        &format!("out={}", saved.display()),
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("out (int[2048]): 2048 elements: [1, 2, 3, 4, 5, 6, 7, 8, ...] min 1, max 2048"), "{out}");
    let (ok, out) = gpubook_run(&[
        &fidelity("index_1d.cu"),
        "--mode",
        "fast",
        "--kernel",
        "vector_add",
        "--grid",
        "8",
        "--block",
        "256",
        "--arg",
        "f32[2048]:ones",
        "--arg",
        &format!("i32[]:{}", saved.display()),
        "--arg",
        "f32[2048]",
        "--arg",
        "i32=2048",
    ]);
    assert!(!ok, "an int .npy is not a float buffer: {out}");
    assert!(out.contains("points to float") || out.contains("holds float, but int was given"), "{out}");
    if let Some(v) = numpy_reads(&saved) {
        assert_eq!(v, "(2048,) int32 1 2048", "numpy reads what gpubook wrote");
    }
}

/// numpy's view of an .npy file: shape, dtype, first and last element (None without numpy).
fn numpy_reads(path: &std::path::Path) -> Option<String> {
    let code = "import sys, numpy as np; a = np.load(sys.argv[1]); print(a.shape, a.dtype, a.flat[0], a.flat[-1])";
    let out = Command::new("python3").args(["-c", code]).arg(path).output().ok()?;
    if !out.status.success() {
        println!("numpy not available: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn vector_buffers_and_a_files_own_script() {
    let (ok, out) = gpubook_run(&[
        &fidelity("vector_float4.cu"),
        "--mode",
        "check",
        "--kernel",
        "twice",
        "--grid",
        "2",
        "--block",
        "128",
        "--arg",
        "float4[256]:iota",
        "--arg",
        "float4[256]",
        "--show",
        "2",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("out (float4[256]): 256 elements: [(0.0, 2.0, 4.0, 6.0), (8.0, 10.0, 12.0, 14.0), ...]"), "{out}");
    // A float4 parameter given a float buffer is refused.
    let (ok, out) = gpubook_run(&[&fidelity("vector_float4.cu"), "--kernel", "twice", "--arg", "f32[256]", "--arg", "float4[256]"]);
    assert!(!ok && out.contains("holds float4, but float was given"), "{out}");
    // No --kernel: the file's `// @launch:` lines, and its expectations checked.
    let (ok, out) = gpubook_run(&[&fidelity("scan_then_add.cu"), "--mode", "check"]);
    assert!(ok, "{out}");
    assert!(out.contains("all 2 expectation(s) of the file met"), "{out}");
}

/// Half and bfloat16 buffers: values rounded to the type on the way in, shown as floats.
#[test]
fn half_and_bfloat16_buffers() {
    let file = gpubook::testing::workspace_file("crates/gpubook-cli/tests/kernels/half_scale.cu");
    let args = ["--kernel", "scale_half", "--mode", "check", "--block", "32", "--arg", "f16[4]:1,2.5,-3,0.1"];
    let rest = ["--arg", "f16[4]:uninit", "--arg", "bf16[4]:uninit", "--arg", "i32=4"];
    let mut all = vec![file.to_str().expect("utf-8 path")];
    all.extend(args.iter().chain(&rest));
    let (ok, out) = gpubook_run(&all);
    assert!(ok, "{out}");
    // 0.1 is 0.0999755859375 as a half; doubled exactly.
    assert!(out.contains("[2.0, 5.0, -6.0, 0.19995117]"), "{out}");
    // 1/3 and 2.5/3 rounded to bfloat16's 8 significant bits.
    assert!(out.contains("[0.33398438, 0.83203125, -1.0,"), "{out}");
    // A half buffer given to a bfloat16 parameter is refused; a value past 65504 too.
    all[8] = "bf16[4]:1";
    let (ok, out) = gpubook_run(&all);
    assert!(!ok && out.contains("but nv_bfloat16 was given"), "{out}");
    all[8] = "f16[4]:70000";
    let (ok, out) = gpubook_run(&all);
    assert!(!ok && out.contains("out of range for f16"), "{out}");
}

#[test]
fn the_map_says_which_elements_the_launch_wrote_and_which_it_never_did() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("map.json");
    // 4 × 128 threads for 1000 elements: the last 488 of `out` are never written.
    let (ok, out) = ok_scale("4", &["--mode", "check", "--map", map.to_str().unwrap()]);
    assert!(ok, "{out}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&map).unwrap()).unwrap();
    let (o, i) = (&m["buffers"][0], &m["buffers"][1]);
    assert_eq!((o["name"].as_str(), o["written_total"].as_u64(), o["unwritten_total"].as_u64()), (Some("out"), Some(512), Some(488)));
    assert_eq!((i["name"].as_str(), i["written_total"].as_u64(), i["poisoned"].as_bool()), (Some("in"), Some(0), Some(false)));
    // 200 cells of 5 elements: cell 102 holds elements 510..=514, two of them written.
    assert_eq!(o["per_cell"], 5);
    assert_eq!(
        (o["written"][0].as_f64(), o["written"][102].as_f64(), o["unwritten"][199].as_f64()),
        (Some(100.0), Some(40.0), Some(100.0))
    );
    assert_eq!(o["stores"][0], 16, "512 stores of 4 bytes: 16 warp requests");
    assert_eq!(m["launches"][0]["threads"], 512);
}

/// `--symbol`: a `__constant__` coefficient table and scale the kernel reads, a `__device__`
/// counter it increments, printed and saved after the launch. The source initialises each to
/// other values, so a write that did not happen shows.
#[test]
fn symbols_are_set_before_the_launch_and_read_back_after() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("above.npy");
    let file = fidelity("symbols_from_host.cu");
    let run = |mode: &str, threshold: &str, extra: &[&str]| {
        let mut args = vec![&file[..], "--mode", mode, "--kernel", "weigh", "--grid", "4", "--block", "256"];
        args.extend(["--arg", "f32[1000]:iota", "--arg", "f32[1000]:uninit", "--arg", "i32=1000"]);
        args.extend(["--symbol", "coeffs=f32[4]:1,2,3,4", "--symbol", "scale=f32=2", "--symbol", threshold]);
        args.extend(extra);
        gpubook_run(&args)
    };
    let save = format!("above={}", saved.display());
    for mode in ["check", "fast"] {
        // Every element is above -1: the counter ends at 7 + 1000.
        let (ok, out) = run(mode, "threshold=f32=-1", &["--symbol", "above=u32=7", "--save", &save]);
        assert!(ok, "{out}");
        assert!(out.contains("y (float[1000]): 1000 elements: [0.0, 4.0, 12.0, 24.0, 8.0, 20.0,"), "{mode}: {out}");
        assert!(out.contains("above (variable, unsigned[1]): 1 elements: [1007]"), "{mode}: {out}");
        assert!(out.contains("coeffs (variable, float[4]): 4 elements: [1.0, 2.0, 3.0, 4.0]"), "{mode}: {out}");
        let npy = std::fs::read(&saved).unwrap();
        assert_eq!(npy[npy.len() - 4..], 1007u32.to_le_bytes(), "the saved counter");
    }
    // `uninit` writes nothing: the source's 100 stays, and nothing is above 1e9.
    let (ok, out) = run("check", "threshold=f32=1e9", &["--symbol", "above=u32[1]:uninit"]);
    assert!(ok, "{out}");
    assert!(out.contains("above (variable, unsigned[1]): 1 elements: [100]"), "{out}");
}

#[test]
fn a_symbol_of_the_wrong_size_or_name_is_refused() {
    let file = fidelity("symbols_from_host.cu");
    let base = [&file[..], "--mode", "check", "--kernel", "weigh", "--arg", "f32[32]:iota", "--arg", "f32[32]", "--arg", "i32=32"];
    let with = |symbol: &str| {
        let mut args = base.to_vec();
        args.extend(["--symbol", symbol]);
        gpubook_run(&args)
    };
    let (ok, out) = with("coeffs=f32[8]:iota");
    assert!(!ok, "{out}");
    assert!(out.contains("the variable `coeffs` is 16 bytes on the device, but 8 × float is 32 bytes"), "{out}");
    let (ok, out) = with("scale=f64=2");
    assert!(!ok && out.contains("`scale` is 4 bytes on the device, but 1 × double is 8 bytes"), "{out}");
    let (ok, out) = with("nope=f32=1");
    assert!(!ok, "{out}");
    assert!(out.contains("no `__device__` or `__constant__` variable named `nope`"), "{out}");
    assert!(out.contains("it declares: coeffs, scale, threshold, above"), "{out}");
    // A kernel is not a variable.
    let (ok, out) = with("weigh=f32=1");
    assert!(!ok && out.contains("variable named `weigh`"), "{out}");
}

#[test]
fn the_map_and_the_output_say_which_thread_wrote_each_element() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("map.json");
    // 4 blocks of 128 threads for 1000 elements, 5 elements a cell: element i is written by
    // block i / 128, thread i % 128, and elements 512.. by no one.
    let (ok, out) = ok_scale("4", &["--mode", "check", "--map", map.to_str().unwrap(), "--writers", "3"]);
    assert!(ok, "{out}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&map).unwrap()).unwrap();
    assert_eq!((m["writers"]["known"].as_bool(), m["writers"]["why"].is_null()), (Some(true), true), "{m}");
    let (o, i) = (&m["buffers"][0], &m["buffers"][1]);
    let cell = |c: usize| &o["writers"][c];
    assert_eq!((cell(0)["i"].as_u64(), cell(0)["block"].as_u64(), cell(0)["thread"].as_u64()), (Some(0), Some(0), Some(0)));
    assert_eq!((cell(30)["i"].as_u64(), cell(30)["block"].as_u64(), cell(30)["thread"].as_u64()), (Some(150), Some(1), Some(22)));
    assert_eq!(cell(30)["who"], "block 1, thread 22");
    assert_eq!((cell(102)["i"].as_u64(), cell(102)["block"].as_u64(), cell(102)["thread"].as_u64()), (Some(510), Some(3), Some(126)));
    assert!(cell(103).is_null() && cell(199).is_null(), "{}", o["writers"]);
    assert_eq!(o["writers"].as_array().map(Vec::len), Some(200));
    assert!(i["writers"].is_null(), "`in` was only read: {}", i["writers"]);
    assert!(out.contains("  out[0]: block 0, thread 0\n  out[1]: block 0, thread 1\n  out[2]: block 0, thread 2\n"), "{out}");
    assert!(out.contains("... 997 more elements of out"), "{out}");
}

#[test]
fn the_writers_of_a_grid_stride_loop_and_of_two_dimensional_blocks() {
    // 3 blocks of 2 threads over 8 elements with a grid-stride loop: element i by global thread
    // i % 6. Then the same elements again by a 2 x 2 block: the last launch wins.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    std::fs::write(
        &file,
        "extern \"C\" __global__ void stride(int* out, int n) {\n\
         for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = i;\n}\n\
         extern \"C\" __global__ void square(int* out) { out[threadIdx.y * 2 + threadIdx.x] = 1; }\n",
    )
    .unwrap();
    let run = |then: bool| {
        let mut args = vec![file.to_str().unwrap(), "--kernel", "stride", "--grid", "3", "--block", "2", "--mode", "check"];
        args.extend(["--arg", "i32[8]:zeros", "--arg", "i32=8", "--writers", "8"]);
        if then {
            args.extend(["--then", "square grid=1 block=2,2 @out"]);
        }
        gpubook_run(&args)
    };
    let (ok, out) = run(false);
    assert!(ok, "{out}");
    for (i, b, t) in [(0, 0, 0), (1, 0, 1), (4, 2, 0), (5, 2, 1), (6, 0, 0), (7, 0, 1)] {
        assert!(out.contains(&format!("  out[{i}]: block {b}, thread {t}\n")), "out[{i}]: {out}");
    }
    let (ok, out) = run(true);
    assert!(ok, "{out}");
    assert!(out.contains("  out[3]: launch 2, block 0, thread (1,1)\n"), "{out}");
    assert!(out.contains("  out[5]: launch 1, block 2, thread 1\n"), "{out}");
}

#[test]
fn fast_mode_says_the_writers_are_unknown_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("map.json");
    let (ok, out) = ok_scale("4", &["--mode", "fast", "--map", map.to_str().unwrap(), "--writers"]);
    assert!(ok, "{out}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&map).unwrap()).unwrap();
    assert_eq!(m["writers"]["known"].as_bool(), Some(false), "{m}");
    assert!(m["writers"]["why"].as_str().is_some_and(|w| w.contains("fast mode")), "{m}");
    assert!(m["buffers"][0]["writers"].is_null(), "{m}");
    assert!(out.contains("  unknown: the emulator's fast mode records no writers; run with --mode check\n"), "{out}");
    assert!(!out.contains("out[0]:"), "{out}");
}

fn ranks_cu() -> String {
    gpubook::testing::workspace_file("crates/gpubook-cli/tests/kernels/ranks.cu").display().to_string()
}

/// Two ranks on one device: `post` stores each rank's number into every rank's copy of `inbox`
/// through the peer table, then `total` adds up each rank's own copy.
#[test]
fn two_ranks_share_a_peer_table_and_print_their_buffers_apart() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("map.json");
    #[rustfmt::skip]
    let (ok, out) = gpubook_run(&[
        &ranks_cu(), "--ranks", "2", "--kernel", "post", "--grid", "1", "--block", "32",
        "--arg", "peers:i32[2]:zeros", "--arg", "i32=rank", "--arg", "i32=ranks",
        "--then", "total grid=1 block=32 @inbox i32[1]:uninit i32=ranks", "--map", map.to_str().unwrap(), "--writers", "2",
    ]);
    assert!(ok, "{out}");
    // The emulator records who wrote: rank 1's thread 0 stored into rank 0's copy.
    if out.contains("(emulator)") {
        assert!(out.contains("  inbox@0[1]: rank 1's launch 1, block 0, thread 0\n"), "{out}");
    }
    assert!(out.contains("rank 0: launched grid (1, 1, 1) × block (32, 1, 1): ok"), "{out}");
    assert!(out.contains("rank 1: launched grid (1, 1, 1) × block (32, 1, 1): ok"), "{out}");
    // Rank 0's launch of `post` runs before rank 1's, both before any `total`.
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("no `{s}` in {out}"));
    assert!(at("total on") > at("rank 1: launched"), "{out}");
    // Each rank's buffers under its own heading: rank 1 received both ranks' numbers too.
    let (r0, r1) = (at("rank 0:\n"), at("rank 1:\n"));
    assert!(r0 < r1, "{out}");
    assert_eq!(out[r0..r1].matches("inbox (int[2]): 2 elements: [0, 10]").count(), 1, "{out}");
    assert_eq!(out[r1..].matches("inbox (int[2]): 2 elements: [0, 10]").count(), 1, "{out}");
    assert_eq!(out[r1..].matches("sum (int[1]): 1 elements: [10]").count(), 1, "{out}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&map).unwrap()).unwrap();
    assert_eq!(m["ranks"], 2);
    let names: Vec<String> = m["buffers"].as_array().unwrap().iter().map(|b| format!("{}@{}", b["name"], b["rank"])).collect();
    assert_eq!(names, ["\"inbox\"@0", "\"sum\"@0", "\"inbox\"@1", "\"sum\"@1"]);
    assert_eq!(m["buffers"][2]["written_total"], 1, "rank 1's inbox: slot 1 changed from 0 to 10");
    assert_eq!((m["launches"][1]["rank"].as_u64(), m["launches"].as_array().unwrap().len()), (Some(1), 4));
    // The file's own script says the same, with `// @ranks: 2`.
    let (ok, out) = gpubook_run(&[&ranks_cu()]);
    assert!(ok && out.contains("all 3 expectation(s) of the file met"), "{out}");
}

#[test]
fn a_peer_table_needs_ranks_a_buffer_and_a_table_parameter() {
    let run = |args: &[&str]| gpubook_run(&[&[ranks_cu().as_str(), "--kernel", "post"][..], args].concat());
    let (ok, out) = run(&["--ranks", "0", "--arg", "peers:i32[2]:zeros", "--arg", "i32=rank", "--arg", "i32=ranks"]);
    assert!(!ok && out.contains("--ranks 0: a launch needs at least one rank"), "{out}");
    let (ok, out) = run(&["--ranks", "2", "--arg", "peers:i32=3", "--arg", "i32=rank", "--arg", "i32=ranks"]);
    assert!(!ok && out.contains("a peer table is of a buffer"), "{out}");
    let (ok, out) = run(&["--ranks", "2", "--arg", "i32[2]:zeros", "--arg", "i32=rank", "--arg", "i32=ranks"]);
    assert!(!ok && out.contains("is a table of pointers: give `peers:`"), "{out}");
    let (ok, out) = run(&["--ranks", "2", "--arg", "peers:@inbox", "--arg", "i32=rank", "--arg", "i32=ranks"]);
    assert!(!ok && out.contains("no buffer named `inbox`"), "{out}");
    let (ok, out) = gpubook_run(&[
        &ranks_cu(),
        "--ranks",
        "2",
        "--kernel",
        "total",
        "--arg",
        "peers:i32[2]:zeros",
        "--arg",
        "i32[1]:zeros",
        "--arg",
        "i32=2",
    ]);
    assert!(!ok && out.contains("is one buffer, not a table of every rank's"), "{out}");
    let (ok, out) = run(&["--ranks", "2", "--arg", "peers:i32[2]:zeros", "--arg", "f32=rank", "--arg", "i32=ranks"]);
    assert!(!ok && out.contains("integer type"), "{out}");
}

/// Every exercise's declared launch (what the served book's Run button runs), with the
/// solution's kernel and with the stub's: the solution's runs to the end on every rank, the
/// stub's ends with an exit code (its diagnostic printed), never a crash.
#[test]
fn every_declared_run_works_with_the_solution_and_ends_with_the_stub() {
    if gpubook::testing::device_or_skip("every_declared_run_works_with_the_solution_and_ends_with_the_stub").is_none() {
        return;
    }
    let root = gpubook::paths::root();
    let catalog = gpubook_course::catalog::Catalog::load(&root).unwrap();
    let mut problems = Vec::new();
    for e in &catalog.exercises {
        let Some(launch) = e.launch() else { continue };
        let launch = launch.unwrap();
        for side in ["solutions", "exercises"] {
            let file = root.join(side).join(&launch.file);
            let mut args = vec!["--kernel".to_string(), launch.kernel.clone(), "--grid".into(), launch.grid.clone()];
            args.extend(["--block".into(), launch.block.clone(), "--shared".into(), launch.shared.to_string()]);
            args.extend(["--ranks".into(), launch.ranks.to_string()]);
            args.extend(launch.args.iter().flat_map(|a| ["--arg".to_string(), a.clone()]));
            args.extend(launch.then.iter().flat_map(|t| ["--then".to_string(), t.clone()]));
            let out = Command::new(gpubook()).arg("run").arg(&file).args(&args).output().expect("gpubook runs");
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            let launched = text.matches(": ok\n").count();
            let want = (1 + launch.then.len()) * launch.ranks;
            match side {
                "solutions" if !out.status.success() || launched != want => {
                    problems.push(format!("{} (solution): {launched} of {want} launches ok:\n{text}", e.id))
                }
                _ if out.status.code().is_none() || text.contains("panicked") => {
                    problems.push(format!("{} ({side}): crashed:\n{text}", e.id))
                }
                _ => {}
            }
            if launch.ranks > 1 && side == "solutions" && !text.contains(&format!("\nrank {}:\n", launch.ranks - 1)) {
                problems.push(format!("{}: no buffers under `rank {}:`:\n{text}", e.id, launch.ranks - 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
