//! The fidelity suite (tests/fidelity/kernels, README there): every file's launches run and its
//! expected values checked, on the emulator in both modes (CI), and on whatever backend
//! `GPUBOOK_BACKEND` picks (scripts/gpu/extra-fidelity.sh compares the emulator with a GPU from
//! the `FIDELITY` lines). Plus streams and events, which a launch script cannot express.

use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::*;
use gpubook_labs::launch_spec::{Script, Session};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const DIR: &str = "crates/gpubook/tests/fidelity/kernels";

fn files() -> Vec<PathBuf> {
    let dir = gpubook::testing::workspace_file(DIR);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    v.sort();
    v
}

/// Runs one file's script: Ok(digest of every buffer's bytes) or what went wrong.
fn run(gpu: &Gpu, file: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let script = Script::parse(&text, file.parent().unwrap_or(Path::new("."))).map_err(|e| format!("script: {e}"))?;
    if script.launches.is_empty() || script.expects.is_empty() || script.feature.is_empty() {
        return Err("the file needs a @feature, at least one @launch and one @expect".into());
    }
    let mut session = Session::with_ranks(gpu.clone(), file, script.ranks.max(1)).map_err(|e| format!("{e:#}"))?;
    session.check_memory(&script.launches).map_err(|e| format!("{e:#}"))?;
    for s in &script.symbols {
        session.set_symbol(s).map_err(|e| format!("{e:#}"))?;
    }
    for line in &script.launches {
        for outcome in session.launch(line).map_err(|e| format!("{e:#}"))? {
            outcome.map_err(|e| format!("`{}`: {e}", line.kernel))?;
        }
    }
    let problems = script.check(&session).map_err(|e| format!("{e:#}"))?;
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let mut h = Sha256::new();
    for b in session.buffers() {
        h.update(session.read(b).map_err(|e| e.to_string())?);
    }
    for s in session.symbols() {
        h.update(session.read_symbol(s).map_err(|e| e.to_string())?);
    }
    Ok(h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect())
}

fn name(file: &Path) -> String {
    file.file_stem().unwrap_or_default().to_string_lossy().into_owned()
}

#[test]
fn fidelity_suite_passes_on_the_emulator_in_both_modes() {
    let files = files();
    assert!(files.len() >= 25, "the suite has {} files", files.len());
    let mut failures = Vec::new();
    for mode in [Mode::Check, Mode::Fast] {
        let gpu = Gpu::emulated(0, EmuConfig { mode, ..EmuConfig::from_env() }).expect("the emulator starts");
        for f in &files {
            match run(&gpu, f) {
                Ok(_) => {}
                Err(e) => failures.push(format!("{} ({mode:?}): {e}", name(f))),
            }
        }
    }
    println!("{} files, both modes: {} failure(s)", files.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One `FIDELITY <file> <backend> ok <digest>` or `FIDELITY <file> <backend> FAIL <why>` line
/// per file, for scripts/gpu/extra-fidelity.sh.
#[test]
fn fidelity_suite_on_the_default_backend() {
    let Some(gpu) = gpubook::testing::device_or_skip("fidelity_suite_on_the_default_backend") else { return };
    let backend = match gpu.backend() {
        BackendKind::Cuda => "cuda",
        _ => "emu",
    };
    let mut failed = 0;
    for f in files() {
        match run(&gpu, &f) {
            Ok(digest) => println!("FIDELITY {} {backend} ok {digest}", name(&f)),
            Err(e) => {
                failed += 1;
                println!("FIDELITY {} {backend} FAIL {}", name(&f), e.replace('\n', " | "));
            }
        }
    }
    match streams_and_events(&gpu) {
        Ok(()) => println!("FIDELITY streams_events {backend} ok -"),
        Err(e) => {
            failed += 1;
            println!("FIDELITY streams_events {backend} FAIL {e}");
        }
    }
    assert_eq!(failed, 0, "{failed} file(s) failed on {backend}");
}

const STREAMS: &str = r#"
extern "C" __global__ void fill(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v + i;
}
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}"#;

/// Two streams fill a buffer each; a third waits for both through events and adds them; the
/// events time the work.
fn streams_and_events(gpu: &Gpu) -> Result<()> {
    let m = gpu.load_module(Source::text("streams_events.cu", STREAMS))?;
    let (fill, add) = (m.load_function("fill")?, m.load_function("add")?);
    let n = 4096i32;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let main = gpu.default_stream();
    let (s1, s2) = (main.fork()?, main.fork()?);
    let mut a = s1.alloc_zeros::<f32>(n as usize)?;
    let mut b = s2.alloc_zeros::<f32>(n as usize)?;
    let mut c = main.alloc_zeros::<f32>(n as usize)?;
    let start = main.record_event()?;
    let (one, ten) = (1.0f32, 10.0f32);
    // SAFETY: a holds n floats and fill's i < n guard keeps the covering grid inside it.
    unsafe { s1.launch_builder(&fill).arg(&mut a).arg(&one).arg(&n).launch(cfg) }?;
    // SAFETY: b holds n floats and fill's i < n guard keeps the covering grid inside it.
    unsafe { s2.launch_builder(&fill).arg(&mut b).arg(&ten).arg(&n).launch(cfg) }?;
    let (done1, done2) = (s1.record_event()?, s2.record_event()?);
    main.wait(&done1)?;
    main.wait(&done2)?;
    // SAFETY: a, b and c hold n floats, the guard keeps threads inside, and the waits order
    // the add after both fills.
    unsafe { main.launch_builder(&add).arg(&a).arg(&b).arg(&mut c).arg(&n).launch(cfg) }?;
    let end = main.record_event()?;
    end.synchronize()?;
    let ms = start.elapsed_ms(&end)?;
    let got = main.clone_dtoh(&c)?;
    let bad = (0..n as usize).find(|&i| got[i] != 11.0 + 2.0 * i as f32);
    match bad {
        Some(i) => Err(GpuError::Size(format!("c[{i}] = {}, expected {}", got[i], 11.0 + 2.0 * i as f32))),
        None if ms.is_nan() || ms < 0.0 => Err(GpuError::Size(format!("elapsed time {ms} ms"))),
        None => Ok(()),
    }
}

#[test]
fn streams_and_events_order_work_on_the_emulator() {
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() }).expect("the emulator starts");
    streams_and_events(&gpu).unwrap();
}

/// The checks can fail: a kernel with a planted mistake is caught by its file's expectations.
#[test]
fn a_wrong_kernel_fails_its_expectations() {
    let src = std::fs::read_to_string(gpubook::testing::workspace_file(DIR).join("index_1d.cu")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("index_1d.cu");
    std::fs::write(&file, src.replace("c[i] = a[i] + b[i]", "c[i] = a[i] + b[i] + (i == 999)")).unwrap();
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Fast, ..EmuConfig::from_env() }).expect("the emulator starts");
    let e = run(&gpu, &file).expect_err("c[999] is off by one");
    assert!(e.contains("1 scalar(s) differ: c[999] = 1999, expected 1998"), "{e}");
}

/// The `@symbol` lines matter: without their writes the source's own values stay (a counter
/// that starts at 100, coefficients of 9) and the expectations say so.
#[test]
fn a_script_without_its_symbols_fails_its_expectations() {
    let src = std::fs::read_to_string(gpubook::testing::workspace_file(DIR).join("symbols_from_host.cu")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("symbols_from_host.cu");
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() }).expect("the emulator starts");
    std::fs::write(&file, src.replace("above=u32=5", "above=u32[1]:uninit")).unwrap();
    let e = run(&gpu, &file).expect_err("the counter starts at 100");
    assert!(e.contains("above[0] = 308, expected 213"), "{e}");
    std::fs::write(&file, src.replace("// @symbol: coeffs=f32[4]:1,2,3,4\n", "")).unwrap();
    let e = run(&gpu, &file).expect_err("every coefficient is 9");
    assert!(e.contains("y[1] = 4.5, expected 1"), "{e}");
}
