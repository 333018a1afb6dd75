//! The emulator's access counts through the API graders use (the trace), and the persistent
//! kernels of crates/gpubook-emu/tests/kernels on whichever backend is here: the same results on
//! the H200 as on the emulator, and counts only where the emulator's check mode made them.

use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::*;

const COUNTS: &str = "crates/gpubook-emu/tests/kernels/counts.cu";
const PERSISTENT: &str = "crates/gpubook-emu/tests/kernels/persistent.cu";

fn source(rel: &str) -> Source {
    Source::file(gpubook::testing::workspace_file(rel))
}

#[test]
fn the_trace_carries_each_launchs_access_counts() {
    let gpu = Gpu::emulated(0, EmuConfig { mode: Mode::Check, ..EmuConfig::from_env() }).unwrap();
    let s = gpu.default_stream();
    let f = gpu.load_module(source(COUNTS)).unwrap().load_function("matmul_tiled").unwrap();
    let n = 64usize;
    let a = s.clone_htod(&vec![1.0f32; n * n]).unwrap();
    let b = s.clone_htod(&vec![2.0f32; n * n]).unwrap();
    let mut c = s.alloc_zeros::<f32>(n * n).unwrap();
    let cfg = LaunchConfig { grid_dim: (4, 4, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 };
    let n_i = n as i32;
    let mut l = s.launch_builder(&f);
    l.arg(&a).arg(&b).arg(&mut c).arg(&n_i);
    // SAFETY: a, b and c hold n × n floats (n = 64, a multiple of TILE), exactly what the
    // 4 × 4 grid of 16 × 16 blocks indexes.
    unsafe { l.launch(cfg) }.unwrap();
    assert!(s.clone_dtoh(&c).unwrap().iter().all(|&v| v == 128.0));
    let trace = gpu.trace().unwrap();
    let launch = trace.launches().last().unwrap();
    assert_eq!(launch.kernel(), Some("matmul_tiled"));
    let counts = launch.access_counts().expect("check mode counts");
    // tests/access_counts.rs derives these: 2n/16 loads a thread, 4 sectors a request.
    assert_eq!(counts.per_thread_max.global_loads, 8);
    assert_eq!(counts.global.loads.sectors_per_request(), 4.0);
    assert_eq!(counts.shared.loads.bank_conflicts(), 0);
    // Buffers by the ids the program holds, named after the kernel's parameters.
    let by_id: Vec<(Option<BufferId>, &str)> = counts.buffers.iter().map(|x| (x.buffer, x.label.as_str())).collect();
    assert_eq!(by_id, [(Some(a.id()), "a"), (Some(b.id()), "b"), (Some(c.id()), "c")]);
    assert_eq!(counts.buffer("c").unwrap().stores.requests, 128);

    // Fast mode counts nothing.
    let fast = Gpu::emulated(1, EmuConfig { mode: Mode::Fast, ..EmuConfig::from_env() }).unwrap();
    let s = fast.default_stream();
    let f = fast.load_module(source(COUNTS)).unwrap().load_function("copy_coalesced").unwrap();
    let x = s.clone_htod(&[1.0f32; 32]).unwrap();
    let mut y = s.alloc_zeros::<f32>(32).unwrap();
    let mut l = s.launch_builder(&f);
    l.arg(&x).arg(&mut y).arg(&32i32);
    // SAFETY: x and y hold 32 floats and the kernel's i < n (32) guard keeps the 32
    // threads inside them.
    unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    assert!(fast.trace().unwrap().launches().last().unwrap().access_counts().is_none());
}

#[test]
fn persistent_kernels_on_any_backend() {
    let Some(gpu) = gpubook::testing::device_or_skip("persistent_kernels_on_any_backend") else { return };
    let m = gpu.load_module(source(PERSISTENT)).unwrap();
    let s = gpu.default_stream();

    // Two blocks through a ring of 4 slots, 20 chunks of 32 floats.
    let chunks = 20usize;
    let input: Vec<f32> = (0..chunks * 32).map(|i| i as f32).collect();
    let inp = s.clone_htod(&input).unwrap();
    let mut out = s.alloc_zeros::<f32>(chunks * 32).unwrap();
    let mut slots = s.alloc_zeros::<f32>(128).unwrap();
    let (mut head, mut tail) = (s.alloc_zeros::<u32>(1).unwrap(), s.alloc_zeros::<u32>(1).unwrap());
    let f = m.load_function("ring").unwrap();
    let chunks_i = chunks as i32;
    let mut l = s.launch_builder(&f);
    l.arg(&inp).arg(&mut out).arg(&mut slots).arg(&mut head).arg(&mut tail).arg(&chunks_i);
    // SAFETY: inp and out hold chunks × 32 floats, slots 4 × 32, head and tail one u32 each:
    // all `ring` indexes with 32-thread blocks.
    unsafe { l.launch(LaunchConfig { grid_dim: (2, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    assert!(got.iter().zip(&input).all(|(g, x)| *g == 2.0 * x), "ring on {}: {:?}", gpu.backend(), &got[..8]);

    // A grid barrier over as many blocks as SMs (all resident on any GPU).
    let blocks = gpu.info().multiprocessors.clamp(2, 64) as usize;
    let n = blocks * 64;
    let mut data = s.alloc_zeros::<f32>(n).unwrap();
    let mut out = s.alloc_zeros::<f32>(n).unwrap();
    let mut arrived = s.alloc_zeros::<u32>(1).unwrap();
    let f = m.load_function("grid_barrier").unwrap();
    let mut l = s.launch_builder(&f);
    l.arg(&mut data).arg(&mut out).arg(&mut arrived);
    // SAFETY: data and out hold one float per thread (blocks × 64) and arrived one u32; at
    // most 64 blocks, all resident at once, so the barrier cannot hang.
    unsafe { l.launch(LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    assert!((0..n).all(|i| got[i] == ((i + 64) % n) as f32), "grid barrier on {}", gpu.backend());
    println!("ring and a {blocks}-block grid barrier agree on {}", gpu.backend());
}
