//! The feature kernels of crates/gpubook/tests/fidelity/features (issue 12's "What to support"):
//! each runs as its header says (`launch:`, `out:`, `expect:`) on the emulator in both modes,
//! and on a GPU when `GPUBOOK_BACKEND=cuda` (scripts/gpu/extra-emu-features.sh prints the
//! `ok`/`failed` lines of that run).

use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::*;
use gpubook::testing::root;
use std::path::{Path, PathBuf};

/// One kernel file's header.
#[derive(Debug)]
struct Spec {
    name: String,
    grid: u32,
    block: u32,
    shared: u32,
    out_type: String,
    expect: Vec<f64>,
}

fn kernel_dir() -> PathBuf {
    root().join("crates/gpubook/tests/fidelity/features")
}

fn kernel_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(kernel_dir()).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "cu")).collect();
    files.sort();
    files
}

fn parse_spec(path: &Path) -> Spec {
    let text = std::fs::read_to_string(path).unwrap();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("// ").and_then(|r| r.strip_prefix(key)).map(|r| r.trim().to_string()))
            .unwrap_or_else(|| panic!("{}: no `// {key}` line", path.display()))
    };
    let launch = field("launch:");
    // The name expression may hold spaces (`block_sum<float, 128>`): it ends at ` grid=`.
    let (name, rest) = launch.split_once(" grid=").expect("launch: NAME grid=G block=B");
    let num = |key: &str| -> u32 { rest.split_whitespace().find_map(|w| w.strip_prefix(key)).map(|v| v.parse().unwrap()).unwrap_or(0) };
    let grid: u32 = rest.split_whitespace().next().unwrap().parse().unwrap();
    let out = field("out:");
    let (out_type, count) = out.split_once(' ').expect("out: TYPE COUNT");
    let expect: Vec<f64> = field("expect:").split_whitespace().map(|v| v.parse().unwrap()).collect();
    assert_eq!(expect.len(), count.trim().parse::<usize>().unwrap(), "{}: expect count", path.display());
    Spec { name: name.trim().into(), grid, block: num("block="), shared: num("shared="), out_type: out_type.into(), expect }
}

/// Runs one kernel; Err says how it failed.
fn run(gpu: &Gpu, path: &Path, spec: &Spec) -> Result<(), String> {
    let module = gpu.load_module(Source::file(path)).map_err(|e| format!("load: {e}"))?;
    let f = module.load_function(&spec.name).map_err(|e| format!("load_function: {e}"))?;
    if spec.shared > 48 << 10 {
        f.set_max_dynamic_shared_bytes(spec.shared).map_err(|e| format!("opt-in shared memory: {e}"))?;
    }
    let cfg = LaunchConfig { grid_dim: (spec.grid, 1, 1), block_dim: (spec.block, 1, 1), shared_mem_bytes: spec.shared };
    let s = gpu.default_stream();
    let n = spec.expect.len();
    macro_rules! launch_and_read {
        ($t:ty) => {{
            let mut out = s.alloc_zeros::<$t>(n).map_err(|e| e.to_string())?;
            // SAFETY: out holds the header's `out:` count of values, which is what each feature
            // kernel writes.
            unsafe { s.launch_builder(&f).arg(&mut out).launch(cfg) }.map_err(|e| format!("launch: {e}"))?;
            s.clone_dtoh(&out).map_err(|e| e.to_string())?.into_iter().map(to_f64).collect::<Vec<f64>>()
        }};
    }
    let got = match spec.out_type.as_str() {
        "int" => launch_and_read!(i32),
        "unsigned" => launch_and_read!(u32),
        "float" => launch_and_read!(f32),
        "half" => launch_and_read!(f16),
        "bf16" => launch_and_read!(bf16),
        other => return Err(format!("unknown out type {other}")),
    };
    let close = |g: f64, w: f64| (g - w).abs() <= 1e-6 * w.abs().max(1.0);
    match got.iter().zip(&spec.expect).position(|(g, w)| !close(*g, *w)) {
        None => Ok(()),
        Some(i) => Err(format!("out[{i}] = {}, expected {} (all: {got:?})", got[i], spec.expect[i])),
    }
}

fn to_f64<T: Into<f64>>(v: T) -> f64 {
    v.into()
}

/// Runs every kernel on `gpu`, printing `ok NAME` / `failed NAME: why`; returns the failures.
fn run_all(gpu: &Gpu, label: &str) -> Vec<String> {
    let mut failed = Vec::new();
    for path in kernel_files() {
        let spec = parse_spec(&path);
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        match run(gpu, &path, &spec) {
            Ok(()) => println!("ok      {label} {file}"),
            Err(e) => {
                println!("failed  {label} {file}: {e}");
                failed.push(format!("{file}: {e}"));
            }
        }
    }
    failed
}

#[test]
fn feature_kernels_on_the_emulator_in_both_modes() {
    for mode in [Mode::Check, Mode::Fast] {
        let mut config = EmuConfig::from_env();
        config.mode = mode;
        let gpu = Gpu::emulated(0, config).expect("the emulator starts");
        let failed = run_all(&gpu, &format!("emulator-{mode}"));
        assert!(failed.is_empty(), "{mode} mode:\n{}", failed.join("\n"));
    }
}

#[test]
fn feature_kernels_on_the_gpu() {
    if requested_backend().ok().flatten() != Some(BackendKind::Cuda) {
        println!("SKIPPED: feature_kernels_on_the_gpu runs with GPUBOOK_BACKEND=cuda");
        return;
    }
    let gpu = Gpu::new().expect("GPUBOOK_BACKEND=cuda: a GPU");
    let failed = run_all(&gpu, "cuda");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn names_that_do_not_name_one_kernel_are_explained() {
    check_names(&Gpu::emulated(0, EmuConfig::from_env()).unwrap());
}

#[test]
fn names_on_the_gpu() {
    if requested_backend().ok().flatten() != Some(BackendKind::Cuda) {
        println!("SKIPPED: names_on_the_gpu runs with GPUBOOK_BACKEND=cuda");
        return;
    }
    check_names(&Gpu::new().expect("GPUBOOK_BACKEND=cuda: a GPU"));
    println!("ok      cuda names");
}

/// Overloads, a template named without arguments, an unknown name; two instantiations.
fn check_names(gpu: &Gpu) {
    let src = "template <int N> __global__ void t(int* o) { o[0] = N; }\n\
               __global__ void o(int* x) { x[0] = 1; }\n__global__ void o(float* x) { x[0] = 2; }\n";
    let m = gpu.load_module(Source::text("names.cu", src)).unwrap();
    let e = m.load_function("o").err().unwrap().to_string();
    assert!(e.contains("ambiguous") && e.contains("o(int* x)") && e.contains("o(float* x)"), "{e}");
    let e = m.load_function("t").err().unwrap().to_string();
    assert!(e.contains("template") && e.contains("t<...>"), "{e}");
    let e = m.load_function("nope").err().unwrap().to_string();
    assert!(e.contains("no kernel named `nope`"), "{e}");
    // Two instantiations of one template are two kernels.
    let s = gpu.default_stream();
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    for n in [3, 7] {
        let f = m.load_function(&format!("t<{n}>")).unwrap();
        let mut out = s.alloc_zeros::<i32>(1).unwrap();
        // SAFETY: out holds the one int that t<N>'s single thread writes.
        unsafe { s.launch_builder(&f).arg(&mut out).launch(one) }.unwrap();
        assert_eq!(s.clone_dtoh(&out).unwrap(), [n]);
    }
}
