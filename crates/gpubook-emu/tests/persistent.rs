//! Persistent kernels: blocks that wait for each other through global memory make progress
//! together when the device holds them all at once, in both modes (tests/kernels/persistent.cu);
//! a wait nothing can end is a hang; a wait that only a block the device cannot hold at the same
//! time could end is explained; and the race detector tells a handover with a fence from one
//! without.

mod support;

use std::sync::Arc;
use std::time::Duration;

use gpubook_cudac::DiagClass;
use gpubook_emu::{EmuConfig, EmuDevice, EmuError, EmuModule, KernelSource, LaunchSpec, Mode};

fn config() -> EmuConfig {
    support::in_crate_dir();
    let mut c = EmuConfig::from_env();
    c.cache_dir = support::scratch().join("gpubook-cache");
    c.watchdog = Duration::from_secs(3);
    c
}

fn module(dev: &EmuDevice) -> Arc<EmuModule> {
    support::in_crate_dir();
    dev.load_module(&KernelSource::from_file("tests/kernels/persistent.cu").expect("persistent.cu")).expect("compiles")
}

fn arg<T: Copy>(v: T) -> Vec<u8> {
    // SAFETY: plain scalars (u64 addresses, i32) only.
    unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}

fn floats(dev: &EmuDevice, label: &str, values: &[f32]) -> u64 {
    let addr = dev.alloc(values.len() * 4, 4, label).unwrap();
    dev.write(addr, &values.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    addr
}

fn zeros(dev: &EmuDevice, label: &str, n: usize) -> u64 {
    let addr = dev.alloc(n * 4, 4, label).unwrap();
    dev.fill(addr, 0, n * 4).unwrap();
    addr
}

fn download(dev: &EmuDevice, addr: u64, n: usize) -> Vec<f32> {
    let mut bytes = vec![0u8; n * 4];
    dev.read(addr, &mut bytes).unwrap();
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn spec(grid: u32, block: u32, mode: Mode) -> LaunchSpec {
    LaunchSpec { grid: [grid, 1, 1], block: [block, 1, 1], shared_mem_bytes: 0, mode: Some(mode) }
}

fn diagnostic(r: Result<impl std::fmt::Debug, EmuError>) -> gpubook_cudac::Diagnostic {
    match r {
        Err(EmuError::Kernel(d)) => {
            println!("--- diagnostic ---\n{d}\n------------------");
            d
        }
        other => panic!("expected a kernel diagnostic, got {other:?}"),
    }
}

#[test]
fn a_producer_and_a_consumer_block_share_a_ring_buffer() {
    let dev = EmuDevice::new(0, config()).unwrap();
    let m = module(&dev);
    // 20 chunks through 4 slots: the producer waits for the consumer 16 times, and the other way.
    let chunks = 20usize;
    let input: Vec<f32> = (0..chunks * 32).map(|i| i as f32).collect();
    let inp = floats(&dev, "in", &input);
    for mode in [Mode::Check, Mode::Fast] {
        let out = zeros(&dev, "out", chunks * 32);
        let (slots, head, tail) = (zeros(&dev, "slots", 4 * 32), zeros(&dev, "head", 1), zeros(&dev, "tail", 1));
        let args = [arg(inp), arg(out), arg(slots), arg(head), arg(tail), arg(chunks as i32)];
        let stats = dev.launch(&m, "ring", &spec(2, 32, mode), &args).unwrap_or_else(|e| panic!("{mode}: {e}"));
        println!("{mode}: {:?}", stats.wall);
        let got = download(&dev, out, chunks * 32);
        assert!(got.iter().zip(&input).all(|(g, x)| *g == 2.0 * x), "{mode}: {got:?}");
    }
}

#[test]
fn a_grid_barrier_from_an_atomic_counter() {
    let dev = EmuDevice::new(0, config()).unwrap();
    let m = module(&dev);
    let (blocks, threads) = (8usize, 64usize);
    let n = blocks * threads;
    for mode in [Mode::Check, Mode::Fast] {
        let (data, out, arrived) = (zeros(&dev, "data", n), zeros(&dev, "out", n), zeros(&dev, "arrived", 1));
        let args = [arg(data), arg(out), arg(arrived)];
        dev.launch(&m, "grid_barrier", &spec(blocks as u32, threads as u32, mode), &args).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let got = download(&dev, out, n);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, ((i + threads) % n) as f32, "{mode}: out[{i}]");
        }
    }
}

#[test]
fn a_handover_without_a_fence_is_a_race() {
    let dev = EmuDevice::new(0, config()).unwrap();
    let m = module(&dev);
    let chunks = 6usize;
    let inp = floats(&dev, "in", &vec![1.0; chunks * 32]);
    let (out, slots, head, tail) =
        (zeros(&dev, "out", chunks * 32), zeros(&dev, "slots", 128), zeros(&dev, "head", 1), zeros(&dev, "tail", 1));
    let args = [arg(inp), arg(out), arg(slots), arg(head), arg(tail), arg(chunks as i32)];
    let d = diagnostic(dev.launch(&m, "ring_no_fence", &spec(2, 32, Mode::Check), &args));
    assert_eq!(d.class, DiagClass::Race);
    assert!(d.message.contains("between blocks on slots["), "{d}");
    assert!(d.message.contains("__threadfence()"), "{d}");
    let marked = std::fs::read_to_string("tests/kernels/persistent.cu").unwrap();
    let line = marked.lines().position(|l| l.ends_with("// RACE")).unwrap() as u32 + 1;
    assert_eq!(d.line, Some(line), "{d}");
}

#[test]
fn a_wait_nothing_ends_is_a_hang_in_both_modes() {
    let dev = EmuDevice::new(0, config()).unwrap();
    let m = module(&dev);
    let flag = zeros(&dev, "flag", 1);
    for mode in [Mode::Check, Mode::Fast] {
        let d = diagnostic(dev.launch(&m, "wait_forever", &spec(2, 32, mode), &[arg(flag)]));
        assert_eq!(d.class, DiagClass::Hang, "{mode}");
        if mode == Mode::Check {
            // Check mode saw the thread read the same value again and again, and says where.
            assert!(d.to_string().contains("keeps reading flag[0]"), "{d}");
            let marked = std::fs::read_to_string("tests/kernels/persistent.cu").unwrap();
            let line = marked.lines().position(|l| l.ends_with("// WAITS")).unwrap() as u32 + 1;
            assert_eq!(d.line, Some(line), "{d}");
        }
    }
}

#[test]
fn a_wait_on_a_block_the_device_cannot_hold_at_once_is_explained() {
    // One SM: blocks of 1024 threads, two at a time. Blocks 0-2 wait for block 3.
    let dev = EmuDevice::new(0, EmuConfig { sms: 1, ..config() }).unwrap();
    assert_eq!(dev.info().resident_blocks(1024, 0), 2);
    let m = module(&dev);
    let flag = zeros(&dev, "flag", 1);
    let d = diagnostic(dev.launch(&m, "wait_for_last", &spec(4, 1024, Mode::Check), &[arg(flag)]));
    assert_eq!(d.class, DiagClass::Hang);
    assert!(d.message.contains("block (0,0,0) waited on flag[0]"), "{d}");
    assert!(d.message.contains("which block (3,0,0) writes"), "{d}");
    assert!(d.message.contains("the grid has 4 blocks and the device holds 2 at once"), "{d}");
    // In fast mode the blocks that started spin until the watchdog; it names the limit too.
    dev.fill(flag, 0, 4).unwrap();
    let d = diagnostic(dev.launch(&m, "wait_for_last", &spec(4, 1024, Mode::Fast), &[arg(flag)]));
    assert_eq!(d.class, DiagClass::Hang);
    assert!(d.to_string().contains("the device holds 2 at once"), "{d}");
    // Within the limit the same kernel finishes: 2 blocks, block 1 sets the flag.
    dev.fill(flag, 0, 4).unwrap();
    for mode in [Mode::Check, Mode::Fast] {
        dev.fill(flag, 0, 4).unwrap();
        dev.launch(&m, "wait_for_last", &spec(2, 1024, mode), &[arg(flag)]).unwrap_or_else(|e| panic!("{mode}: {e}"));
    }
}
