//! End-to-end: real kernels through the real worker. Each test prints what a learner would
//! see (run with `--nocapture` to read it).

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gpubook_cudac::DiagClass;
use gpubook_emu::{EmuConfig, EmuDevice, EmuError, KernelSource, LaunchSpec, Mode};

fn config() -> EmuConfig {
    support::in_crate_dir();
    let mut c = EmuConfig::from_env();
    // A cache of our own under target/, so these tests neither use nor fill ~/.cache.
    c.cache_dir = support::scratch().join("gpubook-cache");
    c
}

fn device() -> EmuDevice {
    EmuDevice::new(0, config()).expect("device")
}

/// Paths relative to the crate root (cargo runs tests there), as a learner's would be.
fn kernel(name: &str) -> KernelSource {
    support::in_crate_dir();
    KernelSource::from_file(format!("tests/kernels/{name}")).expect("test kernel")
}

fn spec(grid: u32, block: u32, shared: u32, mode: Mode) -> LaunchSpec {
    LaunchSpec { grid: [grid, 1, 1], block: [block, 1, 1], shared_mem_bytes: shared, mode: Some(mode) }
}

fn arg<T: Copy>(v: T) -> Vec<u8> {
    // SAFETY: T is a plain scalar (u64 address, i32, f32) in these tests.
    unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}

fn upload(dev: &EmuDevice, label: &str, data: &[f32]) -> u64 {
    let addr = dev.alloc(data.len() * 4, 4, label).unwrap();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    dev.write(addr, &bytes).unwrap();
    addr
}

fn download(dev: &EmuDevice, addr: u64, n: usize) -> Vec<f32> {
    let mut bytes = vec![0u8; n * 4];
    dev.read(addr, &mut bytes).unwrap();
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn kernel_diagnostic(r: Result<impl std::fmt::Debug, EmuError>) -> gpubook_cudac::Diagnostic {
    match r {
        Err(EmuError::Kernel(d)) => {
            println!("--- diagnostic ---\n{d}\n------------------");
            d
        }
        other => panic!("expected a kernel diagnostic, got {other:?}"),
    }
}

#[test]
fn vector_add_round_trip_in_both_modes() {
    let dev = device();
    println!("{:?}", dev.info());
    let t = Instant::now();
    let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
    println!("load_module: {:?}", t.elapsed());
    let n: usize = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let (da, db) = (upload(&dev, "a", &a), upload(&dev, "b", &b));
    for mode in [Mode::Check, Mode::Fast] {
        let dc = dev.alloc(n * 4, 4, "c").unwrap();
        let args = [arg(da), arg(db), arg(dc), arg(n as i32)];
        let stats = dev.launch(&module, "vector_add", &spec(n.div_ceil(256) as u32, 256, 0, mode), &args).unwrap();
        println!("{mode}: {stats:?}");
        assert_eq!(stats.threads, 1024);
        assert_eq!(stats.mode, mode);
        let c = download(&dev, dc, n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "c[{i}] in {mode} mode");
        }
        dev.free(dc).unwrap();
    }
}

/// A local read before anything is stored to it: check mode fills it with bytes 0xFE, so the
/// wrong sums are the same on every run, and keeps the compiler's warning for graders. A kernel
/// whose locals all start with a value gets no warning.
#[test]
fn an_uninitialised_local_holds_a_pattern_and_is_named() {
    const SRC: &str = "extern \"C\" __global__ void window(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum;
    for (int k = i; k < n && k < i + 4; k++) sum += in[k];
    out[i] = sum;
}
extern \"C\" __global__ void window_ok(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
    for (int k = i; k < n && k < i + 4; k++) sum += in[k];
    out[i] = sum;
}
";
    let dev = device();
    let module = dev.load_module(&KernelSource::new("uninit_window.cu", SRC)).unwrap();
    let n = 64;
    let input = upload(&dev, "in", &vec![1.0; n]);
    let out = dev.alloc(n * 4, 4, "out").unwrap();
    let args = [arg(input), arg(out), arg(n as i32)];
    dev.launch(&module, "window", &spec(1, 64, 0, Mode::Check), &args).unwrap();
    let got = download(&dev, out, n);
    let warnings: Vec<String> = module.findings().iter().map(|f| f.located()).collect();
    println!("out[0] = {}; {warnings:?}", got[0]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("uninit_window.cu:5: the local variable `sum` may be read"), "{warnings:?}");
    if gpubook_emu::probe_compiler(&config()).unwrap().pattern_init {
        // 1e38 plus a few ones is still the pattern.
        assert!(got.iter().all(|&v| v == f32::from_bits(0xFEFE_FEFE)), "{got:?}");
    } else {
        println!("NOTE: this compiler has no -ftrivial-auto-var-init=pattern: the pattern is not checked");
    }
    dev.launch(&module, "window_ok", &spec(1, 64, 0, Mode::Check), &args).unwrap();
    assert_eq!(download(&dev, out, n)[..4], [4.0; 4]);
}

/// Two `extern __shared__` arrays in one kernel start at the same address: a finding of the
/// module (gpubook-cudac finds it in the text, for either backend), kept for graders (the kernel still runs, as it does on a GPU).
#[test]
fn two_extern_shared_arrays_in_a_kernel_are_named() {
    const SRC: &str = "extern \"C\" __global__ void kv(const float* vals, const int* keys, float* out) {
    extern __shared__ float sv[];
    extern __shared__ int sk[];
    int t = threadIdx.x;
    sv[t] = vals[t];
    sk[t] = keys[t];
    __syncthreads();
    out[t] = sv[t];
}
";
    let dev = device();
    let module = dev.load_module(&KernelSource::new("extern_alias.cu", SRC)).unwrap();
    let warnings: Vec<String> = module.findings().iter().map(|f| f.located()).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("extern_alias.cu:3: `sv` and `sk` are both `extern __shared__`"), "{warnings:?}");
    let (vals, keys) = (upload(&dev, "vals", &[1.5; 64]), dev.alloc(64 * 4, 4, "keys").unwrap());
    dev.write(keys, &[0u8; 256]).unwrap();
    let out = dev.alloc(64 * 4, 4, "out").unwrap();
    dev.launch(&module, "kv", &spec(1, 64, 512, Mode::Check), &[arg(vals), arg(keys), arg(out)]).unwrap();
    // sk[t] = 0 overwrote sv[t]: the overlap the warning is about.
    assert_eq!(download(&dev, out, 64)[0], 0.0);
}

/// emu-bench's engine column (`bench_engine_only`) must be check mode with its checks off, or
/// the floor it prints would be check mode itself: a read of never-written memory goes
/// unreported and nothing is counted there, while the same launch in check mode is stopped.
#[test]
fn the_engine_only_launch_runs_check_mode_without_its_checks() {
    let n: usize = 256;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    for engine_only in [true, false] {
        let dev = EmuDevice::new(0, EmuConfig { bench_engine_only: engine_only, ..config() }).expect("device");
        let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
        let da = upload(&dev, "a", &a);
        let db = dev.alloc(n * 4, 4, "never_written").unwrap();
        let dc = dev.alloc(n * 4, 4, "c").unwrap();
        let args = [arg(da), arg(db), arg(dc), arg(n as i32)];
        let r = dev.launch(&module, "vector_add", &spec(1, 256, 0, Mode::Check), &args);
        if engine_only {
            let stats = r.expect("no check stops an engine-only launch");
            assert_eq!(stats.mode, Mode::Check);
            let counts = stats.counts.expect("a check-mode launch replies with counts");
            assert_eq!(counts.global.loads.requests + counts.global.stores.requests, 0, "{counts:?}");
        } else {
            let d = kernel_diagnostic(r);
            assert_eq!(d.class, DiagClass::UninitializedRead, "{d}");
        }
    }
}

/// A g++ built without its LTO plugin (the H200 machine's said "could not run lto-wrapper")
/// builds the worker and runs kernels in both modes: the worker's build must not rely on
/// link-time optimisation (worker/access.cpp gets its inlining from one translation unit).
#[test]
fn a_compiler_without_link_time_optimisation_still_builds_the_worker() {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::scratch().join("no-lto");
    let _ = std::fs::remove_dir_all(&dir); // a fresh cache: the worker is built here
    std::fs::create_dir_all(&dir).unwrap();
    let cxx = dir.join("g++-without-lto");
    let script = "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in -flto*) echo 'lto-wrapper: fatal error: could not run lto-wrapper' >&2; exit 1;; esac; done\nexec g++ \"$@\"\n";
    std::fs::write(&cxx, script).unwrap();
    std::fs::set_permissions(&cxx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = config();
    c.cache_dir = dir.join("cache");
    c.cxx = Some(cxx);
    let dev = EmuDevice::new(0, c).expect("a device whose worker is built without LTO");
    let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
    let n = 300usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (da, db) = (upload(&dev, "a", &a), upload(&dev, "b", &a));
    for mode in [Mode::Check, Mode::Fast] {
        let dc = dev.alloc(n * 4, 4, "c").unwrap();
        dev.launch(&module, "vector_add", &spec(2, 256, 0, mode), &[arg(da), arg(db), arg(dc), arg(n as i32)]).unwrap();
        assert_eq!(download(&dev, dc, n), a.iter().map(|x| 2.0 * x).collect::<Vec<f32>>(), "{mode} mode");
    }
}

#[test]
fn reductions_with_static_and_dynamic_shared_memory() {
    let dev = device();
    let module = dev.load_module(&kernel("reduce.cu")).unwrap();
    let n: usize = 100_003;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
    let expected: f64 = data.iter().map(|&x| x as f64).sum();
    let din = upload(&dev, "in", &data);
    for (kernel, shared) in [("block_sum", 0), ("block_sum_dynamic", 256 * 4)] {
        for mode in [Mode::Check, Mode::Fast] {
            let dout = upload(&dev, "out", &[0.0]);
            let args = [arg(din), arg(dout), arg(n as i32)];
            let stats = dev.launch(&module, kernel, &spec(n.div_ceil(256) as u32, 256, shared, mode), &args).unwrap();
            let got = download(&dev, dout, 1)[0] as f64;
            println!("{kernel} {mode}: sum {got} (expected {expected}) in {:?}", stats.wall);
            assert!((got - expected).abs() / expected < 1e-4, "{kernel} {mode}: {got} vs {expected}");
            dev.free(dout).unwrap();
        }
    }
}

#[test]
fn out_of_bounds_write_names_thread_buffer_and_line() {
    let dev = device();
    let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
    let n: usize = 1000;
    let (a, b, c) = (upload(&dev, "a", &vec![1.0; n]), upload(&dev, "b", &vec![2.0; n]), dev.alloc(n * 4, 4, "c").unwrap());
    let args = [arg(a), arg(b), arg(c), arg(n as i32)];
    let d = kernel_diagnostic(dev.launch(&module, "vector_add_unguarded", &spec(4, 256, 0, Mode::Check), &args));
    assert_eq!(d.class, DiagClass::OutOfBounds);
    assert_eq!(d.file.as_deref(), Some(std::path::Path::new("tests/kernels/vector_add.cu")));
    assert_eq!(d.line, Some(12));
    assert_eq!(d.block, Some([3, 0, 0]));
    // Thread 232 of block 3 is element 1000, the first one past the end; its first access
    // is the read of a[1000].
    assert_eq!(d.thread, Some([232, 0, 0]));
    assert!(d.to_string().contains("a[1000]"), "{d}");
    // The device keeps working after a diagnosed launch.
    dev.launch(&module, "vector_add", &spec(4, 256, 0, Mode::Check), &args).unwrap();
}

/// A launch the watchdog stops while its threads are still finishing is "too slow", not a
/// hang: nothing in the kernel is wrong, and the report says how far it got and what to do.
#[test]
fn a_launch_that_is_only_slow_is_not_called_a_hang() {
    let mut cfg = config();
    // The verdict looks at the last quarter of the limit: 375 ms, time enough for a busy
    // machine to let the worker run.
    cfg.watchdog = Duration::from_millis(1500);
    let dev = EmuDevice::new(1, cfg).unwrap();
    let module = dev.load_module(&kernel("faults.cu")).unwrap();
    let x = upload(&dev, "x", &[1.0; 1024]);
    // 1024 blocks of 256 threads, 2000 reads each: a minute or more in check mode, a thread
    // finishing every few tens of microseconds.
    let out = dev.alloc(1024 * 256 * 4, 4, "out").unwrap();
    let args = [arg(x), arg(out), arg(2000i32)];
    let d = kernel_diagnostic(dev.launch(&module, "busy", &spec(1024, 256, 0, Mode::Check), &args));
    assert_eq!(d.class, DiagClass::TooSlow, "{d}");
    let text = d.to_string();
    assert!(text.contains("not stuck") && text.contains("of 1024 blocks done"), "{text}");
    assert!(text.contains("GPUBOOK_EMU_WATCHDOG_S") && text.contains("fast mode"), "{text}");
    // The device goes on: a small launch finishes.
    dev.launch(&module, "busy", &spec(1, 32, 0, Mode::Check), &[arg(x), arg(out), arg(4i32)]).unwrap();
}

#[test]
fn a_hang_is_stopped_by_the_watchdog_and_the_device_recovers() {
    let mut cfg = config();
    cfg.watchdog = Duration::from_secs(2);
    let dev = EmuDevice::new(1, cfg).unwrap();
    let module = dev.load_module(&kernel("faults.cu")).unwrap();
    let flag = dev.alloc(4, 4, "flag").unwrap();
    dev.fill(flag, 0, 4).unwrap();
    let t = Instant::now();
    let d = kernel_diagnostic(dev.launch(&module, "spin", &spec(1, 32, 0, Mode::Check), &[arg(flag)]));
    let took = t.elapsed();
    println!("reported after {took:?}");
    assert_eq!(d.class, DiagClass::Hang);
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A fresh worker takes over; the buffer survived in the arena.
    dev.launch(&module, "hello", &spec(1, 32, 0, Mode::Check), &[arg(7i32)]).unwrap();
    let mut bytes = [9u8; 4];
    dev.read(flag, &mut bytes).unwrap();
    assert_eq!(bytes, [0; 4]);
}

#[test]
fn a_crash_is_reported_and_the_next_launch_works() {
    let dev = device();
    let faults = dev.load_module(&kernel("faults.cu")).unwrap();
    let add = dev.load_module(&kernel("vector_add.cu")).unwrap();
    let p = upload(&dev, "p", &[1.0]);
    for mode in [Mode::Fast, Mode::Check] {
        let d = kernel_diagnostic(dev.launch(&faults, "wild_write", &spec(1, 1, 0, mode), &[arg(p)]));
        assert!(matches!(d.class, DiagClass::Crash | DiagClass::OutOfBounds), "{mode}: {:?}", d.class);
        assert_eq!(d.line, Some(12), "{mode}");
    }
    let n: usize = 300;
    let (a, b, c) = (upload(&dev, "a", &vec![1.0; n]), upload(&dev, "b", &vec![2.0; n]), dev.alloc(n * 4, 4, "c").unwrap());
    dev.launch(&add, "vector_add", &spec(2, 256, 0, Mode::Fast), &[arg(a), arg(b), arg(c), arg(n as i32)]).unwrap();
    assert!(download(&dev, c, n).iter().all(|&x| x == 3.0));
}

#[test]
fn compile_errors_point_at_the_learners_line() {
    let dev = device();
    match dev.load_module(&kernel("syntax_error.cu")) {
        Err(e @ EmuError::Compile { .. }) => {
            println!("{e}");
            let EmuError::Compile { file, line, message, .. } = e else { unreachable!() };
            assert_eq!(file, PathBuf::from("tests/kernels/syntax_error.cu"));
            assert_eq!(line, Some(5));
            assert!(message.contains("undefined_variable"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unsupported_features_are_named_with_their_line() {
    let dev = device();
    match dev.load_module(&kernel("curand.cu")) {
        Err(e @ EmuError::Unsupported { .. }) => {
            println!("{e}");
            let EmuError::Unsupported { feature, line, .. } = e else { unreachable!() };
            assert_eq!(line, 3);
            assert!(feature.contains("cuRAND"), "{feature}");
        }
        other => panic!("{other:?}"),
    }
}

/// The learner meets launch mistakes in `gpubook::gpu`'s checks (tested there); a request that
/// reaches the emulator directly is still refused, by the worker, before anything runs.
#[test]
fn launch_mistakes_are_refused_before_running() {
    let dev = device();
    let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
    assert_eq!(module.kernels().len(), 2);
    let c = dev.alloc(16, 4, "c").unwrap();
    let args = [arg(c), arg(c), arg(c), arg(4i32)];
    let d = kernel_diagnostic(dev.launch(&module, "vector_add", &spec(1, 2048, 0, Mode::Check), &args));
    assert_eq!(d.class, DiagClass::LaunchConfig, "{d}");
    assert!(d.message.contains("2048 threads per block"), "{d}");
    let d = kernel_diagnostic(dev.launch(&module, "vector_add", &spec(1, 4, 0, Mode::Check), &args[..3]));
    assert_eq!(d.class, DiagClass::LaunchConfig, "{d}");
    assert!(d.message.contains("takes 4 parameters but the launch passed 3 arguments"), "{d}");
    let d = kernel_diagnostic(dev.launch(&module, "vector_sub", &spec(1, 4, 0, Mode::Check), &args));
    assert!(d.message.contains("no kernel named `vector_sub`"), "{d}");
}

#[test]
fn kernel_printf_reaches_stdout() {
    let dev = device();
    let module = dev.load_module(&kernel("faults.cu")).unwrap();
    // Visible with --nocapture; captured per test otherwise.
    dev.launch(&module, "hello", &spec(2, 64, 0, Mode::Fast), &[arg(42i32)]).unwrap();
}

#[test]
fn synchronisation_bugs_are_explained() {
    let dev = device();
    let module = dev.load_module(&kernel("sync_bugs.cu")).unwrap();
    let out = dev.alloc(64 * 4, 4, "out").unwrap();
    let cases = [
        ("divergent_barrier", DiagClass::BarrierDivergence, 7),
        ("missing_barrier", DiagClass::Race, 15),
        ("shared_overflow", DiagClass::OutOfBounds, 22),
    ];
    for (name, class, line) in cases {
        let d = kernel_diagnostic(dev.launch(&module, name, &spec(1, 64, 0, Mode::Check), &[arg(out)]));
        assert_eq!(d.class, class, "{name}");
        assert_eq!(d.file.as_deref(), Some(std::path::Path::new("tests/kernels/sync_bugs.cu")), "{name}");
        assert_eq!(d.line, Some(line), "{name}: {d}");
    }
}

#[test]
fn shared_memory_races_follow_barriers_bytes_and_warps() {
    let dev = device();
    let module = dev.load_module(&kernel("sync_bugs.cu")).unwrap();
    let out = dev.alloc(8 * 64 * 4, 4, "out").unwrap();
    // Clean: neighbouring bytes of one word, words reused over barriers and over blocks, lanes
    // ordered by __syncwarp().
    for (name, grid, block) in [("shared_bytes_per_thread", 4, 64), ("shared_lane_swap", 1, 32), ("shared_rounds", 8, 64)] {
        dev.launch(&module, name, &spec(grid, block, 0, Mode::Check), &[arg(out)]).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let rounds = download(&dev, out, 8 * 64); // thread t adds 63 - t + round over three rounds
    assert!(rounds.iter().enumerate().all(|(i, &v)| v == (3 * (63 - i % 64) + 3) as f32), "{rounds:?}");
    // The same kernels with a barrier or __syncwarp() left out: the access that completes the
    // race and the other one, by line.
    for (name, block, lines) in [("shared_rounds_missing_second_barrier", 64, [58, 60]), ("shared_lane_swap_unordered", 32, [76, 77])] {
        let d = kernel_diagnostic(dev.launch(&module, name, &spec(2, block, 0, Mode::Check), &[arg(out)]));
        assert_eq!(d.class, DiagClass::Race, "{name}: {d}");
        let line = d.line.unwrap_or(0);
        assert!(lines.contains(&line), "{name}: {d}");
        let other = if line == lines[0] { lines[1] } else { lines[0] };
        assert!(d.notes.iter().any(|n| n.contains(&format!("sync_bugs.cu:{other}"))), "{name}: {d} {:?}", d.notes);
    }
}

#[test]
fn builds_are_cached_and_an_edited_header_rebuilds() {
    let dev = device();
    let dir = std::env::temp_dir().join(format!("gpubook-header-edit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join("scale.cu");
    std::fs::write(&cu, "#include \"factor.cuh\"\nextern \"C\" __global__ void scale(float* x) { x[threadIdx.x] *= FACTOR; }\n").unwrap();
    let run = |factor: &str| -> (f32, Duration) {
        std::fs::write(dir.join("factor.cuh"), format!("#define FACTOR {factor}\n")).unwrap();
        let t = Instant::now();
        let module = dev.load_module(&KernelSource::from_file(&cu).unwrap()).unwrap();
        let took = t.elapsed();
        let x = upload(&dev, "x", &[1.5]);
        dev.launch(&module, "scale", &spec(1, 1, 0, Mode::Check), &[arg(x)]).unwrap();
        let v = download(&dev, x, 1)[0];
        dev.free(x).unwrap();
        (v, took)
    };
    let (first, t1) = run("2.0f");
    let (again, t2) = run("2.0f");
    let (edited, t3) = run("3.0f");
    println!("first load {t1:?}, cached {t2:?}, after editing the header {t3:?}");
    assert_eq!((first, again, edited), (3.0, 3.0, 4.5));
    assert!(t2 < t1, "a cached load should be faster than a compile");
}

#[test]
fn launches_from_several_threads_and_devices() {
    let devices = [device(), EmuDevice::new(2, config()).unwrap()];
    std::thread::scope(|s| {
        for (k, dev) in devices.iter().enumerate() {
            for t in 0..2 {
                s.spawn(move || {
                    let module = dev.load_module(&kernel("vector_add.cu")).unwrap();
                    let n: usize = 5000 + 100 * t + k;
                    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
                    let (da, db, dc) = (upload(dev, "a", &a), upload(dev, "b", &a), dev.alloc(n * 4, 4, "c").unwrap());
                    for _ in 0..5 {
                        let args = [arg(da), arg(db), arg(dc), arg(n as i32)];
                        dev.launch(&module, "vector_add", &spec(n.div_ceil(128) as u32, 128, 0, Mode::Fast), &args).unwrap();
                    }
                    let c = download(dev, dc, n);
                    assert!(c.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32));
                    for p in [da, db, dc] {
                        dev.free(p).unwrap();
                    }
                });
            }
        }
    });
}

#[test]
fn stack_overflows_and_assertions_are_diagnosed() {
    let dev = device();
    let module = dev.load_module(&kernel("faults.cu")).unwrap();
    let p = dev.alloc(32, 4, "sink").unwrap();
    for mode in [Mode::Check, Mode::Fast] {
        let d = kernel_diagnostic(dev.launch(&module, "overflow", &spec(1, 1, 0, mode), &[arg(p)]));
        assert_eq!(d.class, DiagClass::StackOverflow, "{mode}");
        let d = kernel_diagnostic(dev.launch(&module, "failed_assert", &spec(1, 8, 0, mode), &[arg(p)]));
        assert_eq!(d.class, DiagClass::Trap, "{mode}");
        assert_eq!(d.thread, Some([3, 0, 0]), "{mode}");
    }
}

/// Fast mode's block loop (DESIGN.md, "Modes") hands over to fibers at the first thread that
/// calls a barrier or warp function; the results and diagnostics are those of check mode.
#[test]
fn a_block_loop_ended_part_way_gives_the_same_results_in_both_modes() {
    let dev = device();
    let module = dev.load_module(&kernel("block_loop.cu")).unwrap();
    let n = 4 * 64;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let din = upload(&dev, "in", &data);
    for mode in [Mode::Check, Mode::Fast] {
        let out = dev.alloc(n * 4, 4, "out").unwrap();
        dev.launch(&module, "barrier_in_last_block", &spec(4, 64, 0, mode), &[arg(din), arg(out)]).unwrap();
        let got = download(&dev, out, n);
        let want: Vec<f32> = (0..n).map(|i| if i < 192 { i as f32 } else { (192 + 255 - i) as f32 }).collect();
        assert_eq!(got, want, "barrier_in_last_block, {mode}");

        dev.launch(&module, "shuffle_after_warp_zero", &spec(4, 64, 0, mode), &[arg(din), arg(out)]).unwrap();
        let got = download(&dev, out, n);
        for (i, &got) in got.iter().enumerate() {
            let (t, warp_base) = (i % 64, i - i % 32);
            let want = match t {
                0..=31 => i as f32 + 1.0,
                32 => (warp_base..warp_base + 32).map(|j| j as f32).sum(),
                _ => 0.0,
            };
            assert_eq!(got, want, "shuffle_after_warp_zero[{i}], {mode}");
        }

        // The emulator runs lanes one after another: lane 16 sees lanes 0..15 gone, lane 17 sees
        // lane 16 gone too (on a GPU they would all see 0xffff0000).
        dev.launch(&module, "active_after_returns", &spec(1, 32, 0, mode), &[arg(out)]).unwrap();
        let mut bytes = vec![0u8; 32 * 4];
        dev.read(out, &mut bytes).unwrap();
        let masks: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        let want: Vec<u32> = (16..32).map(|lane| u32::MAX << lane).collect();
        assert_eq!(masks[16..], want[..], "active_after_returns, {mode}: {masks:x?}");

        let d = kernel_diagnostic(dev.launch(&module, "early_return_before_barrier", &spec(1, 64, 0, mode), &[arg(out)]));
        assert_eq!(d.class, DiagClass::BarrierDivergence, "{mode}: {d}");
        assert!(d.to_string().contains("already"), "{mode}: {d}");
        dev.free(out).unwrap();
    }
}

/// Tensor-core fragments misused as a GPU would not forgive: a tile not 32-byte aligned stops
/// the launch with a trap naming the rule at the call's line; a fragment operation half the warp
/// reaches is named as the lanes that never arrived.
#[test]
fn wmma_misuse_is_named() {
    let dev = device();
    let module = dev.load_module(&kernel("wmma_misuse.cu")).unwrap();
    let a = upload(&dev, "a", &[0.0; 256]);
    let out = dev.alloc(32 * 4, 4, "out").unwrap();
    for mode in [Mode::Check, Mode::Fast] {
        let d = kernel_diagnostic(dev.launch(&module, "misaligned", &spec(1, 32, 0, mode), &[arg(a), arg(out)]));
        assert_eq!(d.class, DiagClass::Trap, "{mode:?}: {d}");
        assert!(d.to_string().contains("32-byte (256-bit) aligned") && d.line == Some(9), "{mode:?}: {d}");
    }
    let d = kernel_diagnostic(dev.launch(&module, "half_warp", &spec(1, 32, 0, Mode::Check), &[arg(out)]));
    assert_eq!(d.class, DiagClass::BarrierDivergence, "{d}");
    assert!(d.to_string().contains("threads 16-31 already returned") && d.line == Some(15), "{d}");
}
