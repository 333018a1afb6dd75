//! Access counts, checked against numbers worked out by hand for kernels whose traffic is known
//! (tests/kernels/counts.cu). Each test says how its numbers come about.

mod support;

use gpubook_emu::{AccessCounts, EmuConfig, EmuDevice, EmuModule, GlobalRequests, KernelSource, LaunchSpec, Mode, SharedRequests};

fn device() -> EmuDevice {
    let mut c = EmuConfig::from_env();
    c.cache_dir = support::scratch().join("gpubook-cache");
    EmuDevice::new(0, c).expect("device")
}

fn module(dev: &EmuDevice) -> std::sync::Arc<EmuModule> {
    support::in_crate_dir();
    dev.load_module(&KernelSource::from_file("tests/kernels/counts.cu").expect("counts.cu")).expect("compiles")
}

fn arg<T: Copy>(v: T) -> Vec<u8> {
    // SAFETY: plain scalars (u64 addresses, i32) only.
    unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}

fn buffer(dev: &EmuDevice, label: &str, values: &[f32]) -> u64 {
    let addr = dev.alloc(values.len() * 4, 4, label).unwrap();
    dev.write(addr, &values.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    addr
}

fn ints(dev: &EmuDevice, label: &str, values: &[i32]) -> u64 {
    let addr = dev.alloc(values.len() * 4, 4, label).unwrap();
    dev.write(addr, &values.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    addr
}

/// Runs a check-mode launch and returns its counts.
fn counts(dev: &EmuDevice, m: &EmuModule, kernel: &str, grid: [u32; 2], block: [u32; 2], args: &[Vec<u8>]) -> AccessCounts {
    let spec = LaunchSpec { grid: [grid[0], grid[1], 1], block: [block[0], block[1], 1], shared_mem_bytes: 0, mode: Some(Mode::Check) };
    let stats = dev.launch(m, kernel, &spec, args).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let c = stats.counts.expect("check mode counts");
    println!("{kernel}: {c:#?}");
    c
}

/// Requests whose lanes each touch distinct bytes (no two lanes read the same float).
fn global(requests: u64, bytes: u64, sectors: u64) -> GlobalRequests {
    GlobalRequests { requests, bytes, unique_bytes: bytes, sectors }
}

fn shared(requests: u64, bytes: u64, wavefronts: u64, ideal_wavefronts: u64) -> SharedRequests {
    SharedRequests { requests, bytes, wavefronts, ideal_wavefronts }
}

#[test]
fn coalesced_and_strided_loads() {
    let dev = device();
    let m = module(&dev);
    // 1024 threads in 4 blocks of 256: 32 warps, so 32 warp-level loads and 32 stores of 4 bytes
    // a lane (4096 bytes each way).
    let n = 1024usize;
    let input = buffer(&dev, "in", &vec![1.0; n * 32]);
    let out = dev.alloc(n * 4, 4, "out").unwrap();
    let c = counts(&dev, &m, "copy_coalesced", [4, 1], [256, 1], &[arg(input), arg(out), arg(n as i32)]);
    // A warp reads 32 consecutive floats, 128 bytes from a 256-byte aligned start: 4 sectors.
    assert_eq!(c.global.loads, global(32, 4096, 32 * 4));
    assert_eq!(c.global.stores, global(32, 4096, 32 * 4));
    assert_eq!((c.global.loads.sectors_per_request(), c.global.loads.efficiency()), (4.0, 1.0));
    assert_eq!(c.buffers.iter().map(|b| b.label.as_str()).collect::<Vec<_>>(), ["in", "out"]);
    assert_eq!((c.buffers[0].loads, c.buffers[0].stores), (global(32, 4096, 128), GlobalRequests::default()));
    assert_eq!(c.threads, 1024);
    assert_eq!((c.per_thread_max.global_loads, c.per_thread_min.global_loads), (1, 1));

    // A stride of 32 floats puts the lanes 128 bytes apart: 32 sectors for 128 useful bytes.
    let c = counts(&dev, &m, "copy_strided", [4, 1], [256, 1], &[arg(input), arg(out), arg(n as i32), arg(32i32)]);
    assert_eq!(c.global.loads, global(32, 4096, 32 * 32));
    assert_eq!((c.global.loads.sectors_per_request(), c.global.loads.efficiency()), (32.0, 0.125));
    assert_eq!(c.global.stores, global(32, 4096, 32 * 4));
}

#[test]
fn lanes_out_of_address_order_and_in_two_buffers() {
    let dev = device();
    let m = module(&dev);
    let n = 1024usize;
    let (a, b) = (buffer(&dev, "a", &vec![1.0; n]), buffer(&dev, "b", &vec![2.0; n]));
    let out = dev.alloc(n * 4, 4, "out").unwrap();
    // Reversed lanes read the same 128 aligned bytes a warp as in order: 4 sectors, no waste.
    let c = counts(&dev, &m, "copy_reversed", [4, 1], [256, 1], &[arg(a), arg(out), arg(n as i32)]);
    assert_eq!(c.global.loads, global(32, 4096, 32 * 4));
    assert_eq!(c.buffers[0].loads, global(32, 4096, 32 * 4));
    // Half a warp's lanes read 16 of `a`'s floats (every other one of 32: 4 sectors), the other
    // half 16 of `b`'s: 8 sectors a warp in all, however the compiler splits the loads.
    let c = counts(&dev, &m, "interleave", [4, 1], [256, 1], &[arg(a), arg(b), arg(out), arg(n as i32)]);
    assert_eq!((c.global.loads.bytes, c.global.loads.unique_bytes, c.global.loads.sectors), (4096, 4096, 32 * 8));
    for label in ["a", "b"] {
        let t = c.buffers.iter().find(|t| t.label == label).expect("the buffer's tally");
        assert_eq!((t.loads.bytes, t.loads.unique_bytes, t.loads.sectors), (2048, 2048, 32 * 4), "{label}");
    }
}

#[test]
fn a_float4_is_one_access_of_16_bytes() {
    let dev = device();
    let m = module(&dev);
    // 256 float4 (1024 floats), one block of 256 threads: 8 warps, one request each.
    let input = buffer(&dev, "in", &vec![1.0; 1024]);
    let out = dev.alloc(1024 * 4, 16, "out").unwrap();
    let c = counts(&dev, &m, "copy_vec4", [1, 1], [256, 1], &[arg(input), arg(out), arg(256i32)]);
    // A warp's 32 float4 are 512 contiguous bytes: 16 sectors.
    assert_eq!(c.global.loads, global(8, 4096, 8 * 16));
    assert_eq!(c.global.stores, global(8, 4096, 8 * 16));
    assert_eq!((c.per_thread_max.global_loads, c.per_thread_max.global_stores), (1, 1));
    // In shared memory the same 512 bytes take 4 wavefronts (128 words, 4 per bank), which is
    // also the fewest they can take: no conflict.
    let c = counts(&dev, &m, "stage_vec4", [1, 1], [256, 1], &[arg(input), arg(out), arg(256i32)]);
    assert_eq!(c.shared.stores, shared(8, 4096, 8 * 4, 8 * 4));
    assert_eq!(c.shared.loads, shared(8, 4096, 8 * 4, 8 * 4));
}

#[test]
fn a_tiled_matmul_reads_global_memory_tile_times_less() {
    let dev = device();
    let m = module(&dev);
    // n = 64, 16 x 16 threads a block, 4 x 4 blocks: 4096 threads, 8 warps a block (a warp is
    // two rows of 16 threads), 128 warps.
    let n = 64usize;
    let a = buffer(&dev, "a", &vec![1.0; n * n]);
    let b = buffer(&dev, "b", &vec![2.0; n * n]);
    let c_out = dev.alloc(n * n * 4, 4, "c").unwrap();
    let args = [arg(a), arg(b), arg(c_out), arg(n as i32)];

    // Naive: every thread loads a[row][k] and b[k][col] for k < 64: 128 loads, 64 per matrix.
    // Per warp and k, one request for a (2 rows: 2 distinct floats, 2 sectors) and one for b
    // (16 consecutive floats, 64 bytes at a 64-byte boundary: 2 sectors):
    // 128 warps x 64 k x 2 = 16384 requests, 2 sectors each, 4096 x 128 x 4 bytes.
    // The 16 lanes of a row read the same a[row][k] (a broadcast): a request of a uses 2 distinct
    // floats (8 bytes) of its 64 sector bytes, one of b 16 floats (64 bytes).
    let naive = counts(&dev, &m, "matmul_naive", [4, 4], [16, 16], &args);
    let unique = 8192 * 8 + 8192 * 64;
    assert_eq!(naive.global.loads, GlobalRequests { unique_bytes: unique, ..global(16384, 4096 * 128 * 4, 16384 * 2) });
    assert_eq!(naive.global.loads.efficiency(), unique as f64 / (16384.0 * 2.0 * 32.0));
    assert_eq!(naive.per_thread_max.global_loads, 2 * n as u64);
    // Stores: one per thread; a warp writes 2 rows of 16 floats: 4 sectors.
    assert_eq!(naive.global.stores, global(128, 4096 * 4, 128 * 4));

    // Tiled: 4 tiles; per tile a thread loads one float of a and one of b: 8 loads (2n / 16).
    // A warp's tile load is 2 rows of 16 consecutive floats: 1 request, 4 sectors.
    // 128 warps x 4 tiles x 2 = 1024 requests.
    let tiled = counts(&dev, &m, "matmul_tiled", [4, 4], [16, 16], &args);
    assert_eq!(tiled.global.loads, global(1024, 4096 * 8 * 4, 1024 * 4));
    assert_eq!(tiled.per_thread_max.global_loads, 2 * n as u64 / 16);
    assert_eq!(naive.per_thread_max.global_loads / tiled.per_thread_max.global_loads, 16);
    assert_eq!(tiled.global.stores, naive.global.stores);
    // Shared memory: per tile each warp stores 2 requests (as and bs, 32 distinct words each),
    // and reads as[ty][k] (2 words, banks 16 apart) and bs[k][tx] (16 words) for 16 k:
    // 32 requests. No conflicts: one wavefront each.
    assert_eq!(tiled.shared.stores, shared(1024, 4096 * 8 * 4, 1024, 1024));
    assert_eq!(tiled.shared.loads, shared(16384, 4096 * 4 * 32 * 4, 16384, 16384));
    // Per thread: 2 stores and 2 x 16 loads a tile (check mode's inline checks count most of them).
    assert_eq!((tiled.per_thread_max.shared_stores, tiled.per_thread_min.shared_stores), (8, 8));
    assert_eq!((tiled.per_thread_max.shared_loads, tiled.per_thread_min.shared_loads), (128, 128));
    assert_eq!(tiled.per_thread_max.barriers, 8);
    assert_eq!(naive.per_thread_max.barriers, 0);
}

#[test]
fn transposes_coalesce_and_padding_removes_bank_conflicts() {
    let dev = device();
    let m = module(&dev);
    // n = 64, 32 x 32 threads a block, 2 x 2 blocks: 4096 threads, 128 warps (a warp is one row
    // of 32 threads: threadIdx.x = 0..31).
    let n = 64usize;
    let input = buffer(&dev, "in", &(0..n * n).map(|i| i as f32).collect::<Vec<_>>());
    let out = dev.alloc(n * n * 4, 4, "out").unwrap();
    let args = [arg(input), arg(out), arg(n as i32)];

    // Naive: a warp reads 32 consecutive floats (4 sectors) and writes a column, 64 floats
    // (256 bytes) apart: 32 sectors a request.
    let naive = counts(&dev, &m, "transpose_naive", [2, 2], [32, 32], &args);
    assert_eq!(naive.global.loads, global(128, 4096 * 4, 128 * 4));
    assert_eq!(naive.global.stores, global(128, 4096 * 4, 128 * 32));
    assert_eq!(naive.global.stores.sectors_per_request(), 32.0);

    // Through shared memory both are coalesced: 4 sectors a request.
    let tiled = counts(&dev, &m, "transpose_shared", [2, 2], [32, 32], &args);
    assert_eq!(tiled.global.loads, global(128, 4096 * 4, 128 * 4));
    assert_eq!(tiled.global.stores, global(128, 4096 * 4, 128 * 4));
    // The tile is written by rows (32 consecutive words: one wavefront) and read by columns:
    // tile[lane][ty] is word lane * 32 + ty, bank ty for every lane: 32 wavefronts, 31 extra.
    assert_eq!(tiled.shared.stores, shared(128, 4096 * 4, 128, 128));
    assert_eq!(tiled.shared.loads, shared(128, 4096 * 4, 128 * 32, 128));
    assert_eq!(tiled.shared.loads.bank_conflicts(), 128 * 31);

    // Padded to 33 floats a row: word lane * 33 + ty is in bank (lane + ty) % 32, all distinct.
    let padded = counts(&dev, &m, "transpose_padded", [2, 2], [32, 32], &args);
    assert_eq!(padded.shared.loads, shared(128, 4096 * 4, 128, 128));
    assert_eq!(padded.shared.loads.bank_conflicts(), 0);
    assert_eq!(padded.global, tiled.global);
}

#[test]
fn atomics_are_counted_where_they_happen() {
    let dev = device();
    let m = module(&dev);
    // 1024 values in 16 bins, 4 blocks of 256 threads.
    let n = 1024usize;
    let values: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 16).collect();
    let input = ints(&dev, "values", &values);
    let bins = ints(&dev, "bins", &[0; 16]);
    let args = [arg(input), arg(bins), arg(n as i32)];
    // Every thread adds to global memory: 1024 global atomics.
    let c = counts(&dev, &m, "histogram_global", [4, 1], [256, 1], &args);
    assert_eq!((c.global.atomics, c.shared.atomics), (1024, 0));
    assert_eq!(c.buffer_atomics("bins"), 1024);
    // Privatised: 1024 atomics in shared memory, then 16 per block (64) in global memory.
    let c = counts(&dev, &m, "histogram_shared", [4, 1], [256, 1], &args);
    assert_eq!((c.global.atomics, c.shared.atomics), (64, 1024));
    assert_eq!((c.per_thread_max.atomics, c.per_thread_min.atomics), (2, 1));
    // Zeroing the 16 counters is one request a block (lanes 0-15 of warp 0), so is reading them.
    assert_eq!(c.shared.stores, shared(4, 4 * 16 * 4, 4, 4));
    assert_eq!(c.shared.loads, shared(4, 4 * 16 * 4, 4, 4));
}

#[test]
fn fast_mode_counts_nothing() {
    let dev = device();
    let m = module(&dev);
    let input = buffer(&dev, "in", &[1.0; 64]);
    let out = dev.alloc(64 * 4, 4, "out").unwrap();
    let spec = LaunchSpec { grid: [1, 1, 1], block: [64, 1, 1], shared_mem_bytes: 0, mode: Some(Mode::Fast) };
    let stats = dev.launch(&m, "copy_coalesced", &spec, &[arg(input), arg(out), arg(64i32)]).unwrap();
    assert_eq!(stats.counts, None);
}

trait BufferAtomics {
    fn buffer_atomics(&self, label: &str) -> u64;
}

impl BufferAtomics for AccessCounts {
    fn buffer_atomics(&self, label: &str) -> u64 {
        self.buffers.iter().find(|b| b.label == label).map_or(0, |b| b.atomics)
    }
}

#[test]
fn a_warps_request_is_the_same_however_its_lanes_arrive() {
    let dev = device();
    let m = module(&dev);
    let n = 256usize;
    let input = buffer(&dev, "in", &vec![1.0; 3 * n]);
    let out = dev.alloc(n * 4, 4, "out").unwrap();
    // One block of 256 threads: 8 warps. Odd lanes: 16 floats a warp, every other one of 128
    // bytes, so the same 4 sectors for half the bytes.
    let c = counts(&dev, &m, "copy_odd_lanes", [1, 1], [256, 1], &[arg(input), arg(out), arg(n as i32)]);
    assert_eq!(c.global.loads, global(8, 8 * 64, 8 * 4));
    assert_eq!(c.global.stores, global(8, 8 * 64, 8 * 4));
    // Three reads a lane at one load: three coalesced requests a warp.
    let c = counts(&dev, &m, "sum_reps", [1, 1], [256, 1], &[arg(input), arg(out), arg(n as i32), arg(3i32)]);
    assert_eq!(c.global.loads, global(24, 24 * 128, 24 * 4));
    assert_eq!(c.global.stores, global(8, 8 * 128, 8 * 4));
    assert_eq!((c.per_thread_max.global_loads, c.per_thread_min.global_loads), (3, 3));
    // Loads before a barrier, stores after it: one request a warp each.
    let c = counts(&dev, &m, "copy_across_barrier", [1, 1], [256, 1], &[arg(input), arg(out), arg(n as i32)]);
    assert_eq!(c.global.loads, global(8, 8 * 128, 8 * 4));
    assert_eq!(c.global.stores, global(8, 8 * 128, 8 * 4));
    assert_eq!((c.per_thread_max.barriers, c.per_thread_min.barriers), (1, 1));
    // 1000 threads: the last warp has 8 lanes, 32 bytes in one sector.
    let input = buffer(&dev, "in1000", &vec![1.0; 1000]);
    let out = dev.alloc(1000 * 4, 4, "out1000").unwrap();
    let c = counts(&dev, &m, "copy_coalesced", [1, 1], [1000, 1], &[arg(input), arg(out), arg(1000i32)]);
    assert_eq!(c.global.loads, global(32, 4000, 31 * 4 + 1));
    assert_eq!(c.global.stores, global(32, 4000, 31 * 4 + 1));
    // Thread 0's one shared store is its own: every other thread made none.
    let c = counts(&dev, &m, "one_shared_store", [1, 1], [256, 1], &[arg(input), arg(out), arg(n as i32)]);
    assert_eq!((c.per_thread_max.shared_stores, c.per_thread_min.shared_stores), (1, 0));
    assert_eq!((c.per_thread_max.global_loads, c.per_thread_min.global_loads), (1, 1));
}
