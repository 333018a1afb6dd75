//! The bug zoo: every diagnostic the emulator gives, each from a kernel with one planted bug
//! (tests/kernels/zoo.cu), asserted to report its class, a thread and the marked line, each beside
//! a correct twin that passes. The test process runs all of them and is still here at the end.
//! On a CUDA GPU the buggy kernels are not launched (a wild write would kill the context); the
//! twins run there and must agree with the CPU reference.

use gpubook::cudac::DiagClass;
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::*;
use std::time::Duration;

const ZOO: &str = "crates/gpubook/tests/kernels/zoo.cu";
/// The one bug NVRTC itself refuses (too much static shared memory), in a file of its own.
const ZOO_SHARED: &str = "crates/gpubook/tests/kernels/zoo_shared.cu";

struct Case {
    bug: &'static str,
    class: Option<DiagClass>,
    twin: &'static str,
    block: u32,
    shared: u32,
    /// Start from a zeroed output instead of the poisoned one.
    zeroed: bool,
    /// The .cu file holding the bug.
    file: &'static str,
    /// Run the bug in fast mode (the twin runs in check mode like every twin).
    fast: bool,
}

const fn case(bug: &'static str, class: DiagClass, twin: &'static str) -> Case {
    Case { bug, class: Some(class), twin, block: 128, shared: 0, zeroed: false, file: ZOO, fast: false }
}

fn cases() -> Vec<Case> {
    use DiagClass::*;
    vec![
        case("no_guard", OutOfBounds, "copy"),
        case("off_by_one", OutOfBounds, "scale"),
        case("negative_index", OutOfBounds, "difference"),
        case("reverse_past_end", OutOfBounds, "reverse"),
        case("unsigned_wrap", OutOfBounds, "difference"),
        case("shared_overflow", OutOfBounds, "shared_staging"),
        Case { shared: 128 * 4, ..case("dynamic_shared", OutOfBounds, "dynamic_shared") },
        case("missing_sync", Race, "block_reverse"),
        case("reduce_no_loop_sync", Race, "reduce"),
        case("volatile_warp_reduce", Race, "reduce"),
        Case { zeroed: true, ..case("global_sum", Race, "global_sum") },
        Case { zeroed: true, ..case("in_place_shift", Race, "shift") },
        case("divergent_barrier", BarrierDivergence, "uniform_barrier"),
        case("early_return", BarrierDivergence, "shared_staging"),
        case("partial_shuffle", BarrierDivergence, "half_shuffle"),
        Case { zeroed: true, ..case("spin_forever", Hang, "flag") },
        case("stuck_loop", Hang, "loop"),
        case("null_pointer", Crash, "copy"),
        case("wild_pointer", Crash, "copy"),
        case("divide_by_zero", Crash, "divide"),
        case("recursion", StackOverflow, "recursion"),
        case("huge_local", StackOverflow, "small_local"),
        case("assert", Trap, "copy"),
        case("read_unwritten", UninitializedRead, "accumulate"),
        case("shared_tile_edge", UninitializedRead, "shared_neighbour"),
        Case { zeroed: true, ..case("shared_histogram", UninitializedRead, "shared_histogram") },
        case("misaligned_vector", Misaligned, "vector_copy"),
        Case { fast: true, ..case("misaligned_vector", Misaligned, "vector_copy") },
        case("shuffle_outside_mask", InvalidShuffle, "half_shuffle"),
        Case { block: 48, ..case("shuffle_missing_lane", InvalidShuffle, "partial_warp") },
        Case { fast: true, ..case("empty_loop", Hang, "copy") },
        Case { file: ZOO_SHARED, ..case("too_much_shared", LaunchConfig, "shared_staging") },
        // Refused by the API before any backend sees it.
        Case { bug: "copy", class: None, twin: "copy", block: 2048, shared: 0, zeroed: false, file: ZOO, fast: false },
    ]
}

/// The CPU's answer for a twin, given the input.
fn reference(twin: &str, x: &[f32], block: usize) -> Vec<f32> {
    let n = x.len();
    // NaN marks elements with no defined answer (a neighbour past the end of a partial tile).
    let at = |j: usize| x.get(j).copied().unwrap_or(f32::NAN);
    match twin {
        "copy" | "shared_staging" | "dynamic_shared" => x.to_vec(),
        "scale" => x.iter().map(|v| 2.0 * v).collect(),
        "difference" => (0..n).map(|i| x[i] - if i > 0 { x[i - 1] } else { 0.0 }).collect(),
        "reverse" => (0..n).map(|i| x[n - 1 - i]).collect(),
        "block_reverse" => (0..n).map(|i| at(i / block * block + block - 1 - i % block)).collect(),
        "uniform_barrier" => (0..n).map(|i| x[i] + if i % block < 64 { at(i + 64) } else { 0.0 }).collect(),
        "shift" => (0..n).map(|i| if i + 1 < n { x[i + 1] } else { f32::NAN }).collect(),
        "loop" => x.iter().map(|v| v + 2.0).collect(),
        "recursion" => x.iter().map(|v| v + 10.0).collect(),
        "small_local" => (0..n).map(|i| x[i] + (i & 15) as f32).collect(),
        "divide" => (0..n).map(|i| (i as i32 / (x[i] as i32 + 1)) as f32).collect(),
        "accumulate" => x.to_vec(),
        "shared_neighbour" => {
            (0..n).map(|i| x[i] + if (i + 1) % block != 0 { x.get(i + 1).copied().unwrap_or(0.0) } else { 0.0 }).collect()
        }
        "half_shuffle" => (0..n).map(|i| x[i] + if i % 32 < 16 { at(i + 16) } else { 0.0 }).collect(),
        "vector_copy" => x.to_vec(),
        "partial_warp" => (0..n)
            .map(|i| {
                let t = i % block;
                let lane = t % 32;
                let lanes = (block - (t - t % 32)).min(32); // lanes of this thread's warp
                // Threads past n hold 0.
                x[i] + if lane + 16 < lanes { x.get(i + 16).copied().unwrap_or(0.0) } else { 0.0 }
            })
            .collect(),
        other => panic!("no reference for {other}"),
    }
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 37) % 101) as f32).collect()
}

/// Lines of `file` marked `// BUG: name`.
fn marked_lines(file: &str, name: &str) -> Vec<u32> {
    let src = std::fs::read_to_string(gpubook::testing::workspace_file(file)).unwrap();
    let tag = format!("// BUG: {name}");
    src.lines().enumerate().filter(|(_, l)| l.trim_end().ends_with(&tag)).map(|(i, _)| i as u32 + 1).collect()
}

fn launch(gpu: &Gpu, m: &Module, kernel: &str, c: &Case, out: &mut DeviceSlice<f32>, x: &DeviceSlice<f32>, n: usize) -> Result<()> {
    let f = m.load_function(kernel)?;
    let s = gpu.default_stream();
    let n_i = n as i32;
    let cfg =
        LaunchConfig { grid_dim: ((n as u32).div_ceil(c.block.min(1024)), 1, 1), block_dim: (c.block, 1, 1), shared_mem_bytes: c.shared };
    let mut l = s.launch_builder(&f);
    l.arg(out).arg(x).arg(&n_i);
    // SAFETY: out and x hold n floats and a twin stays inside them; a planted bug runs only
    // on the emulator, whose worker process takes the fault and reports it.
    unsafe { l.launch(cfg) }
}

#[test]
fn every_planted_bug_is_diagnosed_and_every_twin_passes() {
    let config = EmuConfig { mode: Mode::Check, watchdog: Duration::from_secs(2), ..EmuConfig::from_env() };
    let gpu = Gpu::emulated(0, config.clone()).expect("the emulator starts");
    let m = gpu.load_module(Source::file(gpubook::testing::workspace_file(ZOO))).expect("zoo.cu compiles");
    let fast = Gpu::emulated(1, EmuConfig { mode: Mode::Fast, ..config }).expect("the emulator starts");
    let m_fast = fast.load_module(Source::file(gpubook::testing::workspace_file(ZOO))).expect("zoo.cu compiles");
    let x_fast = fast.default_stream().clone_htod(&input(1000)).unwrap();
    let m_shared = gpu.load_module(Source::file(gpubook::testing::workspace_file(ZOO_SHARED))).expect("zoo_shared.cu compiles");
    let s = gpu.default_stream();
    let n = 1000; // not a multiple of the block: the last block has threads past the end
    let x_host = input(n);
    let x = s.clone_htod(&x_host).unwrap();
    let mut problems = Vec::new();
    for c in cases() {
        // SAFETY: left unwritten on purpose: the emulator poisons it, and reading it before
        // writing is one of the bugs it must report.
        let mut out = if c.zeroed { s.alloc_zeros::<f32>(n) } else { unsafe { s.alloc::<f32>(n) } }.unwrap();
        let kernel = format!("bug_{}", c.bug);
        let kernel = if c.class.is_none() { format!("ok_{}", c.bug) } else { kernel };
        let module = if c.file == ZOO_SHARED { &m_shared } else { &m };
        let result = if c.fast {
            let mut out = fast.default_stream().alloc_zeros::<f32>(n).unwrap();
            launch(&fast, &m_fast, &kernel, &c, &mut out, &x_fast, n)
        } else {
            launch(&gpu, module, &kernel, &c, &mut out, &x, n)
        };
        match (&c.class, result) {
            (None, Err(GpuError::LaunchConfig { message, .. })) => println!("{:<22} launch_config (API): {message}", c.bug),
            (Some(class), Err(GpuError::Kernel(d))) => {
                let lines = marked_lines(c.file, c.bug);
                // Fast mode is -O2 with the kernel inlined into its block loop: the line tables
                // may put a faulting load on the next statement, the one that uses its value.
                let near = |l: u32| lines.contains(&l) || (c.fast && lines.contains(&l.saturating_sub(1)));
                let ok = d.class == *class
                    && d.thread.is_some()
                    && d.line.is_some_and(near)
                    && d.file.as_ref().is_some_and(|f| f.ends_with(c.file));
                println!("{:<22} {}{}", c.bug, if c.fast { "(fast) " } else { "" }, d.to_string().lines().next().unwrap_or(""));
                if !ok {
                    problems.push(format!("{}: expected {class:?} at one of lines {lines:?} with a thread, got: {d}", c.bug));
                }
            }
            (_, other) => problems.push(format!("{}: expected {:?}, got {:?}", c.bug, c.class, other.err())),
        }
        // The twin: same job, no bug, right answer (on a fresh output).
        let block = if c.block > 1024 { 128 } else { c.block };
        let twin = Case { block, ..c };
        let mut out = s.alloc_zeros::<f32>(n).unwrap();
        match launch(&gpu, &m, &format!("ok_{}", twin.twin), &twin, &mut out, &x, n) {
            Ok(()) => {
                if let Some(bad) = check_twin(twin.twin, &s.clone_dtoh(&out).unwrap(), &x_host, block as usize) {
                    problems.push(format!("twin ok_{}: {bad}", twin.twin));
                }
            }
            Err(e) => problems.push(format!("twin ok_{} failed: {e}", twin.twin)),
        }
    }
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
}

/// `None` when the twin's output matches the reference (twins with no numeric output are skipped).
fn check_twin(twin: &str, got: &[f32], x: &[f32], block: usize) -> Option<String> {
    match twin {
        "flag" => return (got[0] != 12345.0).then(|| format!("flag is {}", got[0])),
        "global_sum" => {
            let want: f32 = x.iter().step_by(block).sum();
            return (got[0] != want).then(|| format!("sum {} instead of {want}", got[0]));
        }
        "shared_histogram" => {
            let mut want = vec![0.0f32; 8];
            x.iter().for_each(|v| want[*v as usize % 8] += 1.0);
            return (got[..8] != want[..]).then(|| format!("bins {:?} instead of {want:?}", &got[..8]));
        }
        "reduce" => {
            let want: Vec<f32> = x.chunks(block).map(|c| c.iter().sum()).collect();
            return (got[..want.len()] != want[..]).then(|| format!("block sums {:?} instead of {:?}", &got[..3], &want[..3]));
        }
        _ => {}
    }
    let want = reference(twin, x, block);
    let bad = (0..got.len()).find(|&i| !want[i].is_nan() && got[i] != want[i]);
    bad.map(|i| format!("out[{i}] = {} instead of {}", got[i], want[i]))
}

#[test]
fn twins_agree_with_the_cpu_on_any_backend() {
    let Some(gpu) = gpubook::testing::device_or_skip("twins_agree_with_the_cpu_on_any_backend") else { return };
    let m = gpu.load_module(Source::file(gpubook::testing::workspace_file(ZOO))).unwrap();
    let s = gpu.default_stream();
    let n = 1024; // whole blocks, so every twin has a defined answer everywhere
    let x_host = input(n);
    let x = s.clone_htod(&x_host).unwrap();
    for twin in [
        "copy",
        "scale",
        "difference",
        "reverse",
        "shared_staging",
        "block_reverse",
        "reduce",
        "global_sum",
        "shift",
        "uniform_barrier",
        "loop",
        "recursion",
        "small_local",
        "divide",
        "accumulate",
        "half_shuffle",
        "vector_copy",
        "partial_warp",
        "shared_neighbour",
        "shared_histogram",
    ] {
        let c = Case { bug: twin, class: None, twin, block: 128, shared: 0, zeroed: true, file: ZOO, fast: false };
        let mut out = s.alloc_zeros::<f32>(n).unwrap();
        launch(&gpu, &m, &format!("ok_{twin}"), &c, &mut out, &x, n).unwrap_or_else(|e| panic!("ok_{twin}: {e}"));
        let got = s.clone_dtoh(&out).unwrap();
        if let Some(bad) = check_twin(twin, &got, &x_host, 128) {
            panic!("ok_{twin} on {}: {bad}", gpu.backend());
        }
    }
    println!("20 twins agree with the CPU on {}", gpu.backend());
}

/// The first launch of a fresh emulator (its worker starts then) reports reads of memory nothing
/// wrote, as every later launch does: `gpubook run` makes exactly one launch.
#[test]
fn a_fresh_emulator_reports_reads_of_never_written_memory() {
    let config = EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() };
    let gpu = Gpu::emulated(0, config).expect("the emulator starts");
    let m = gpu.load_module(Source::file(gpubook::testing::workspace_file(ZOO))).unwrap();
    let s = gpu.default_stream();
    let n = 1000;
    let x = s.clone_htod(&input(n)).unwrap();
    let c = case("read_unwritten", DiagClass::UninitializedRead, "accumulate");
    // SAFETY: left unwritten on purpose: bug_read_unwritten reads it, and the emulator must
    // report that.
    let mut out = unsafe { s.alloc::<f32>(n) }.unwrap();
    match launch(&gpu, &m, "bug_read_unwritten", &c, &mut out, &x, n) {
        Err(GpuError::Kernel(d)) => {
            assert_eq!(d.class, DiagClass::UninitializedRead, "{d}");
            assert!(d.message.contains("out[0]"), "{d}");
        }
        other => panic!("expected an uninitialized read on the first launch, got {other:?}"),
    }
    // SAFETY: ok_accumulate writes each element before it reads it.
    let mut out = unsafe { s.alloc::<f32>(n) }.unwrap();
    launch(&gpu, &m, "ok_accumulate", &c, &mut out, &x, n).unwrap();
}

/// A reduction missing the barrier inside its loop, its read and its write on two lines: the race
/// report names both lines, the write as where it happened and the read as the other access.
#[test]
fn a_race_is_reported_at_the_lines_of_both_accesses() {
    const SRC: &str = "extern \"C\" __global__ void reduce(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = t < n ? in[t] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (t < k) {
            float other = s[t + k]; // line 8: the read
            s[t] += other;          // line 9: the write
        }
    }
    if (t == 0) out[0] = s[0];
}";
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() }).expect("the emulator starts");
    let m = gpu.load_module(Source::text("reduce_race.cu", SRC)).unwrap();
    let s = gpu.default_stream();
    let x = s.clone_htod(&input(128)).unwrap();
    let c = case("reduce_race", DiagClass::Race, "reduce");
    let mut out = s.alloc_zeros::<f32>(1).unwrap();
    match launch(&gpu, &m, "reduce", &c, &mut out, &x, 128) {
        Err(GpuError::Kernel(d)) => {
            assert_eq!((d.class, d.line), (DiagClass::Race, Some(9)), "{d}");
            assert!(d.notes.iter().any(|n| n.contains("read") && n.contains("reduce_race.cu:8")), "{d}");
        }
        other => panic!("expected a race, got {other:?}"),
    }
}
