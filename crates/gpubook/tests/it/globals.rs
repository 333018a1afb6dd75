//! `Module::get_global`: a module's `__constant__` and `__device__` variables written before a
//! launch and read after it (cudarc's `CudaModule::get_global`, `cudaMemcpyToSymbol`), on the
//! emulator in both modes.

use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::*;

const SRC: &str = r#"
__constant__ float table[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
__device__ unsigned counter = 1000;
extern "C" __global__ void lookup(float* out) {
    int i = threadIdx.x;
    out[i] = 2.0f * table[i];
    atomicAdd(&counter, 1u);
}
"#;

fn run(mode: Mode) -> Result<()> {
    exercise(&Gpu::emulated(0, EmuConfig { mode, ..EmuConfig::from_env() })?)
}

fn exercise(gpu: &Gpu) -> Result<()> {
    let stream = gpu.default_stream();
    let m = gpu.load_module(Source::text("globals.cu", SRC))?;
    let table = m.get_global("table")?;
    let counter = m.get_global("counter")?;
    assert_eq!((table.num_bytes(), counter.num_bytes()), (32, 4));
    // The source's initial values, before anything is written.
    assert_eq!(table.read::<f32>(&stream)?, vec![-1.0; 8]);
    assert_eq!(counter.read::<u32>(&stream)?, vec![1000]);
    let values: Vec<f32> = (0..8).map(|i| i as f32 + 0.5).collect();
    table.write(&stream, &values)?;
    counter.write(&stream, &[5u32])?;
    let f = m.load_function("lookup")?;
    let mut out = stream.alloc_zeros::<f32>(8)?;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (8, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: out holds 8 floats, one per thread of the single 8-thread block, as `table`
    // holds 8 entries.
    unsafe { stream.launch_builder(&f).arg(&mut out).launch(cfg) }?;
    assert_eq!(stream.clone_dtoh(&out)?, values.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
    assert_eq!(table.read::<f32>(&stream)?, values, "read back as written");
    // The kernel's eight increments, on top of the host's 5; a second launch adds eight more.
    assert_eq!(counter.read::<u32>(&stream)?, vec![13]);
    // SAFETY: the same launch on the same 8-float `out`.
    unsafe { stream.launch_builder(&f).arg(&mut out).launch(cfg) }?;
    assert_eq!(counter.read::<u32>(&stream)?, vec![21]);
    Ok(())
}

#[test]
fn constant_and_device_variables_are_written_and_read_in_check_mode() {
    run(Mode::Check).unwrap();
}

#[test]
fn constant_and_device_variables_are_written_and_read_in_fast_mode() {
    run(Mode::Fast).unwrap();
}

/// The same on whatever `GPUBOOK_BACKEND` picks: on a GPU, cuModuleGetGlobal and copies into
/// device memory (scripts/gpu/run.sh runs this binary with GPUBOOK_BACKEND=cuda).
#[test]
fn constant_and_device_variables_on_the_default_backend() {
    let Some(gpu) = gpubook::testing::device_or_skip("constant_and_device_variables_on_the_default_backend") else { return };
    exercise(&gpu).unwrap();
}

#[test]
fn wrong_sizes_and_unknown_names_are_explained() {
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() }).unwrap();
    let stream = gpu.default_stream();
    let m = gpu.load_module(Source::text("globals.cu", SRC)).unwrap();
    let table = m.get_global("table").unwrap();
    let e = table.write(&stream, &[1.0f32; 4]).unwrap_err().to_string();
    assert!(e.contains("`table` is 32 bytes on the device; 16 bytes were given (4 × f32)"), "{e}");
    let e = m.get_global("counter").unwrap().read::<f64>(&stream).unwrap_err().to_string();
    assert!(e.contains("`counter` is 4 bytes on the device, not a whole number of f64"), "{e}");
    let e = m.get_global("tabel").err().expect("no such variable").to_string();
    assert!(e.contains("no `__device__` or `__constant__` variable named `tabel` in globals.cu (it declares: table, counter"), "{e}");
    let e = m.get_global("lookup").err().expect("a kernel is not a variable").to_string();
    assert!(e.contains("variable named `lookup`"), "{e}");
    // A refusal leaves the worker running: the module still launches.
    let f = m.load_function("lookup").unwrap();
    let mut out = stream.alloc_zeros::<f32>(8).unwrap();
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (8, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: out holds 8 floats, one per thread of the single 8-thread block, as `table`
    // holds 8 entries.
    unsafe { stream.launch_builder(&f).arg(&mut out).launch(cfg) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![-2.0f32; 8]);
}
