//! Who wrote each element (`EmuConfig::writers`), checked against kernels whose writers are known
//! in advance (tests/kernels/writers.cu): every element of every written buffer, exactly.

mod support;

use gpubook_emu::{AccessCounts, EmuConfig, EmuDevice, EmuModule, KernelSource, LaunchSpec, Mode, Writers};

fn device(writers: bool) -> EmuDevice {
    let mut c = EmuConfig::from_env();
    c.cache_dir = support::scratch().join("gpubook-cache");
    c.writers = writers;
    EmuDevice::new(0, c).expect("device")
}

fn module(dev: &EmuDevice) -> std::sync::Arc<EmuModule> {
    support::in_crate_dir();
    dev.load_module(&KernelSource::from_file("tests/kernels/writers.cu").expect("writers.cu")).expect("compiles")
}

fn word<T: Copy>(v: T) -> Vec<u8> {
    // SAFETY: plain scalars (u64 addresses, i32) only.
    unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}

fn launch(
    dev: &EmuDevice,
    m: &EmuModule,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    mode: Mode,
    args: &[Vec<u8>],
) -> Option<AccessCounts> {
    let spec = LaunchSpec { grid, block, shared_mem_bytes: 0, mode: Some(mode) };
    dev.launch(m, kernel, &spec, args).unwrap_or_else(|e| panic!("{kernel}: {e}")).counts
}

fn writers<'a>(c: &'a AccessCounts, label: &str) -> &'a Writers {
    let b = c.buffers.iter().find(|b| b.label == label).unwrap_or_else(|| panic!("no buffer {label}: {c:#?}"));
    b.writers.as_ref().unwrap_or_else(|| panic!("{label} has no writers"))
}

/// Every element's writer, as global linear thread ids.
fn all(w: &Writers) -> Vec<Option<u64>> {
    (0..w.thread_plus_one.len()).map(|i| w.writer(i)).collect()
}

#[test]
fn each_thread_writes_one_known_element() {
    let dev = device(true);
    let m = module(&dev);
    // 3 blocks of 32 threads, 90 elements: thread i writes element 89 - i; threads 90..95 write
    // nothing; the buffer's two spare elements are never written.
    let out = dev.alloc(92 * 4, 4, "out").unwrap();
    let c = launch(&dev, &m, "reversed", [3, 1, 1], [32, 1, 1], Mode::Check, &[word(out), word(90i32)]).unwrap();
    let w = writers(&c, "out");
    assert_eq!(w.elem_size, 4);
    let expected: Vec<Option<u64>> = (0..92u64).map(|e| (e < 90).then(|| 89 - e)).collect();
    assert_eq!(all(w), expected);
}

#[test]
fn a_grid_stride_loop_credits_each_thread_with_several_elements() {
    let dev = device(true);
    let m = module(&dev);
    // 2 blocks of 4 threads over 21 elements: element e is written by global thread e % 8, i.e.
    // block (e % 8) / 4, thread e % 4.
    let out = dev.alloc(21 * 4, 4, "out").unwrap();
    let c = launch(&dev, &m, "grid_stride", [2, 1, 1], [4, 1, 1], Mode::Check, &[word(out), word(21i32)]).unwrap();
    let expected: Vec<Option<u64>> = (0..21u64).map(|e| Some(e % 8)).collect();
    assert_eq!(all(writers(&c, "out")), expected);
}

#[test]
fn two_dimensional_blocks_use_linear_ids() {
    let dev = device(true);
    let m = module(&dev);
    // A 10 x 5 image, blocks of 4 x 2 threads, a grid of 3 x 3 blocks. Pixel (x, y) is written by
    // block (x / 4, y / 2), linear bx + 3 by, and thread (x % 4, y % 2), linear tx + 4 ty.
    let (width, height) = (10u64, 5u64);
    let bytes = (width * height * 4) as usize;
    let input = dev.alloc(bytes, 4, "in").unwrap();
    dev.write(input, &vec![0u8; bytes]).unwrap();
    let out = dev.alloc(bytes, 4, "out").unwrap();
    let args = [word(input), word(out), word(width as i32), word(height as i32)];
    let c = launch(&dev, &m, "image", [3, 3, 1], [4, 2, 1], Mode::Check, &args).unwrap();
    let expected: Vec<Option<u64>> = (0..width * height)
        .map(|e| {
            let (x, y) = (e % width, e / width);
            let block = x / 4 + 3 * (y / 2);
            Some(block * 8 + x % 4 + 4 * (y % 2))
        })
        .collect();
    assert_eq!(all(writers(&c, "out")), expected);
    let read_only = c.buffers.iter().find(|b| b.label == "in").expect("in was read");
    assert_eq!(read_only.writers, None, "a buffer the launch only read has no writers");
}

#[test]
fn wide_elements_take_their_first_words_writer_and_narrow_ones_the_words_last_store() {
    let dev = device(true);
    let m = module(&dev);
    let out = dev.alloc(6 * 8, 8, "out").unwrap();
    let c = launch(&dev, &m, "doubles", [2, 1, 1], [3, 1, 1], Mode::Check, &[word(out), word(6i32)]).unwrap();
    let w = writers(&c, "out");
    assert_eq!((w.elem_size, all(w)), (8, (0..6).map(Some).collect()));
    // Bytes: threads 4k..4k+3 store into word k one after another; the shadow keeps the last
    // store (thread 4k+3, byte 3), so only element 4k+3 is credited (DESIGN.md "Writers").
    let bytes = dev.alloc(8, 1, "bytes").unwrap();
    let c = launch(&dev, &m, "bytes", [1, 1, 1], [8, 1, 1], Mode::Check, &[word(bytes), word(8i32)]).unwrap();
    assert_eq!(all(writers(&c, "bytes")), vec![None, None, None, Some(3), None, None, None, Some(7)]);
}

#[test]
fn writers_only_when_asked_and_only_in_check_mode() {
    let dev = device(false);
    let m = module(&dev);
    let out = dev.alloc(64 * 4, 4, "out").unwrap();
    let c = launch(&dev, &m, "reversed", [2, 1, 1], [32, 1, 1], Mode::Check, &[word(out), word(64i32)]).unwrap();
    assert!(c.buffers.iter().all(|b| b.writers.is_none()), "not asked for: {c:#?}");
    let dev = device(true);
    let m = module(&dev);
    let out = dev.alloc(64 * 4, 4, "out").unwrap();
    assert_eq!(launch(&dev, &m, "reversed", [2, 1, 1], [32, 1, 1], Mode::Fast, &[word(out), word(64i32)]), None);
    // The next check-mode launch still records (the request is per launch).
    let c = launch(&dev, &m, "reversed", [2, 1, 1], [32, 1, 1], Mode::Check, &[word(out), word(64i32)]).unwrap();
    assert_eq!(writers(&c, "out").writer(0), Some(63));
}
