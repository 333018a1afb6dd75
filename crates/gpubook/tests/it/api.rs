//! The GPU API, end to end, on whichever backend `Gpu::new` picks: the same source runs on the
//! H200 (GPUBOOK_BACKEND=cuda) and on the emulator. Without a device each test prints SKIPPED.

use gpubook::gpu::*;
use gpubook::testing::{device_or_skip, root};
use std::sync::Arc;

fn api_module(gpu: &Gpu) -> Module {
    gpu.load_module(Source::file(root().join("crates/gpubook/tests/kernels/api.cu"))).expect("crates/gpubook/tests/kernels/api.cu compiles")
}

fn cfg1d(n: usize, block: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(block).max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

fn is_emulator(gpu: &Gpu) -> bool {
    gpu.backend() == BackendKind::Emulator
}

#[test]
fn round_trips_of_several_types_and_sizes() {
    let Some(gpu) = device_or_skip("round_trips_of_several_types_and_sizes") else { return };
    let s = gpu.default_stream();
    for n in [1usize, 31, 32, 33, 1000, 65_537] {
        let f: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
        assert_eq!(s.clone_dtoh(&s.clone_htod(&f).unwrap()).unwrap(), f, "f32 × {n}");
        let d: Vec<f64> = (0..n).map(|i| (i as f64).sqrt()).collect();
        assert_eq!(s.clone_dtoh(&s.clone_htod(&d).unwrap()).unwrap(), d, "f64 × {n}");
        let b: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
        assert_eq!(s.clone_dtoh(&s.clone_htod(&b).unwrap()).unwrap(), b, "u8 × {n}");
        let q: Vec<i64> = (0..n).map(|i| -(i as i64) << 33).collect();
        assert_eq!(s.clone_dtoh(&s.clone_htod(&q).unwrap()).unwrap(), q, "i64 × {n}");
        let v: Vec<vector::Float4> = (0..n).map(|i| vector::Float4 { x: i as f32, y: 1.0, z: 2.0, w: -(i as f32) }).collect();
        assert_eq!(s.clone_dtoh(&s.clone_htod(&v).unwrap()).unwrap(), v, "float4 × {n}");
    }
}

#[test]
fn round_trip_of_one_gib() {
    let Some(gpu) = device_or_skip("round_trip_of_one_gib") else { return };
    // 1 GiB on a GPU; the emulator keeps CI's memory budget with 64 MiB.
    let n = if is_emulator(&gpu) { 16 << 20 } else { 256 << 20 };
    let s = gpu.default_stream();
    let host: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let dev = s.clone_htod(&host).unwrap();
    let back = s.clone_dtoh(&dev).unwrap();
    assert!(back == host, "a {} MiB round trip changed data", (n * 4) >> 20);
}

#[test]
fn device_to_device_copies_memset_and_views() {
    let Some(gpu) = device_or_skip("device_to_device_copies_memset_and_views") else { return };
    let s = gpu.default_stream();
    let src = s.clone_htod(&(0..100).collect::<Vec<i32>>()).unwrap();
    let copy = s.clone_dtod(&src).unwrap();
    assert_eq!(s.clone_dtoh(&copy).unwrap(), (0..100).collect::<Vec<_>>());

    let mut dst = s.alloc_zeros::<i32>(100).unwrap();
    assert_eq!(s.clone_dtoh(&dst).unwrap(), vec![0; 100]);
    // Copy the middle of src into the tail of dst through views.
    s.memcpy_dtod(&src.slice(10..20), &mut dst.slice_mut(90..100)).unwrap();
    let got = s.clone_dtoh(&dst).unwrap();
    assert_eq!(&got[90..], &(10..20).collect::<Vec<_>>()[..]);
    assert!(got[..90].iter().all(|&x| x == 0));

    // memset works in bytes: 0x01 in every byte of an i32 is 0x01010101.
    let mut ones = s.alloc_zeros::<i32>(8).unwrap();
    s.memset_bytes(&mut ones.slice_mut(2..4), 1).unwrap();
    assert_eq!(s.clone_dtoh(&ones).unwrap(), vec![0, 0, 0x0101_0101, 0x0101_0101, 0, 0, 0, 0]);

    // Two halves of one allocation, written by one kernel each.
    let m = api_module(&gpu);
    let iota = m.load_function("iota").unwrap();
    let mut both = s.alloc_zeros::<i32>(64).unwrap();
    let (mut lo, mut hi) = both.split_at_mut(32);
    for half in [&mut lo, &mut hi] {
        let n = 32i32;
        let mut l = s.launch_builder(&iota);
        l.arg(&mut *half).arg(&n);
        // SAFETY: each half is a 32-int view, and iota's i < n (32) guard keeps the 32-thread
        // block inside it.
        unsafe { l.launch(cfg1d(32, 32)) }.unwrap();
    }
    let expect: Vec<i32> = (0..32).chain(0..32).collect();
    assert_eq!(s.clone_dtoh(&both).unwrap(), expect);

    // Host-side copy into an existing Vec, and a length mismatch as a clear error.
    let mut host = vec![0i32; 64];
    s.memcpy_dtoh(&both, &mut host).unwrap();
    assert_eq!(host, expect);
    let err = s.memcpy_dtoh(&both, &mut vec![0i32; 3]).unwrap_err();
    assert!(err.to_string().contains("64 elements but the destination 3"), "{err}");
}

#[test]
fn kernels_1d_2d_and_shared_memory() {
    let Some(gpu) = device_or_skip("kernels_1d_2d_and_shared_memory") else { return };
    let s = gpu.default_stream();
    let m = api_module(&gpu);

    let n = 10_000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let (a_d, b_d) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    // SAFETY: vector_add writes all n values just below, before anything reads them.
    let mut c_d = unsafe { s.alloc::<f32>(n) }.unwrap();
    let add = m.load_function("vector_add").unwrap();
    let n_i = n as i32;
    let mut l = s.launch_builder(&add);
    l.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
    // SAFETY: a_d, b_d and c_d hold n floats and vector_add's i < n guard keeps every thread
    // inside them.
    unsafe { l.launch(cfg1d(n, 256)) }.unwrap();
    assert_eq!(s.clone_dtoh(&c_d).unwrap(), (0..n).map(|i| 3.0 * i as f32).collect::<Vec<_>>());

    // A grid-stride loop with fewer threads than elements, and a float scalar argument.
    let scale = m.load_function("scale").unwrap();
    let k = 0.5f32;
    let mut l = s.launch_builder(&scale);
    l.arg(&a_d).arg(&mut c_d).arg(&k).arg(&n_i);
    // SAFETY: a_d and c_d hold n floats and scale's grid-stride loop stops at n.
    unsafe { l.launch(LaunchConfig { grid_dim: (3, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    assert_eq!(s.clone_dtoh(&c_d).unwrap(), (0..n).map(|i| 0.5 * i as f32).collect::<Vec<_>>());

    // 2-D.
    let (w, h) = (37i32, 21i32);
    let mut out = s.alloc_zeros::<i32>((w * h) as usize).unwrap();
    let coords = m.load_function("coords").unwrap();
    let mut l = s.launch_builder(&coords);
    l.arg(&mut out).arg(&w).arg(&h);
    // SAFETY: out holds w × h ints and the x < w && y < h guard keeps the 48 × 24 threads
    // inside it.
    unsafe { l.launch(LaunchConfig { grid_dim: (3, 3, 1), block_dim: (16, 8, 1), shared_mem_bytes: 0 }) }.unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    for y in 0..h {
        for x in 0..w {
            assert_eq!(got[(y * w + x) as usize], 1000 * y + x);
        }
    }

    // Dynamic shared memory.
    let blocks = 5usize;
    let input: Vec<i32> = (0..(blocks * 128) as i32).collect();
    let in_d = s.clone_htod(&input).unwrap();
    let mut sums = s.alloc_zeros::<i32>(blocks).unwrap();
    let bs = m.load_function("block_sum").unwrap();
    let mut l = s.launch_builder(&bs);
    l.arg(&in_d).arg(&mut sums);
    // SAFETY: in_d holds 128 ints per block and sums one per block; the 128 × 4 bytes of
    // dynamic shared memory hold one int per thread.
    unsafe { l.launch(LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 128 * 4 }) }.unwrap();
    let expect: Vec<i32> = input.chunks(128).map(|c| c.iter().sum()).collect();
    assert_eq!(s.clone_dtoh(&sums).unwrap(), expect);

    // u64 arithmetic and a u64 scalar.
    let mut big = s.clone_htod(&[u64::MAX - 1, 41]).unwrap();
    let add_one = m.load_function("add_one").unwrap();
    let two = 2u64;
    let mut l = s.launch_builder(&add_one);
    l.arg(&mut big).arg(&two);
    // SAFETY: big holds 2 u64s and add_one's i < n (2) guard keeps the 32 threads inside it.
    unsafe { l.launch(cfg1d(2, 32)) }.unwrap();
    assert_eq!(s.clone_dtoh(&big).unwrap(), vec![u64::MAX, 42]);
}

#[test]
fn wrong_arguments_and_configs_are_typed_errors() {
    let Some(gpu) = device_or_skip("wrong_arguments_and_configs_are_typed_errors") else { return };
    let s = gpu.default_stream();
    let m = api_module(&gpu);
    let add = m.load_function("vector_add").unwrap();
    let a = s.alloc_zeros::<f32>(4).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let n = 4i32;

    let mut l = s.launch_builder(&add);
    l.arg(&a).arg(&a).arg(&mut c);
    // SAFETY: the argument check refuses this launch (the test expects it), so no kernel
    // runs.
    let e = unsafe { l.launch(cfg1d(4, 32)) }.unwrap_err();
    assert!(matches!(e, GpuError::Arguments { .. }) && e.to_string().contains("takes 4 arguments"), "{e}");

    let n64 = 4usize;
    let mut l = s.launch_builder(&add);
    l.arg(&a).arg(&a).arg(&mut c).arg(&n64);
    // SAFETY: the argument check refuses this launch (the test expects it), so no kernel
    // runs.
    let e = unsafe { l.launch(cfg1d(4, 32)) }.unwrap_err();
    assert!(e.to_string().contains("is a int, but a usize (8 bytes)"), "{e}");

    let ints = s.alloc_zeros::<i32>(4).unwrap();
    let mut l = s.launch_builder(&add);
    l.arg(&a).arg(&ints).arg(&mut c).arg(&n);
    // SAFETY: the argument check refuses this launch (the test expects it), so no kernel
    // runs.
    let e = unsafe { l.launch(cfg1d(4, 32)) }.unwrap_err();
    assert!(e.to_string().contains("points to float, but `buffer"), "{e}");

    let mut l = s.launch_builder(&add);
    l.arg(&a).arg(&n).arg(&mut c).arg(&n);
    // SAFETY: the argument check refuses this launch (the test expects it), so no kernel
    // runs.
    let e = unsafe { l.launch(cfg1d(4, 32)) }.unwrap_err();
    assert!(e.to_string().contains("is a pointer, but a value of type i32"), "{e}");

    for (cfg, says) in [
        (LaunchConfig { grid_dim: (1, 1, 1), block_dim: (2048, 1, 1), shared_mem_bytes: 0 }, "a block holds at most 1024"),
        (LaunchConfig { grid_dim: (0, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }, "no zero dimension"),
        (LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 32, 2), shared_mem_bytes: 0 }, "2048 threads"),
        (LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 1 << 20 }, "dynamic shared memory"),
    ] {
        let mut l = s.launch_builder(&add);
        l.arg(&a).arg(&a).arg(&mut c).arg(&n);
        // SAFETY: the configuration check refuses this launch (the test expects it), so no
        // kernel runs.
        let e = unsafe { l.launch(cfg) }.unwrap_err();
        assert!(matches!(e, GpuError::LaunchConfig { .. }) && e.to_string().contains(says), "{e}");
    }

    let e = m.load_function("no_such_kernel").err().expect("an unknown kernel is an error");
    assert!(e.to_string().contains("it defines: iota, scale"), "{e}");
}

#[test]
fn compile_errors_name_the_file_and_line() {
    let Some(gpu) = device_or_skip("compile_errors_name_the_file_and_line") else { return };
    let e = gpu.load_module(Source::file(root().join("crates/gpubook/tests/kernels/broken.cu"))).err().expect("broken.cu must not compile");
    let GpuError::Compile { file, line, message, .. } = &e else { panic!("expected a compile error, got {e}") };
    assert!(file.ends_with("crates/gpubook/tests/kernels/broken.cu"), "{}", file.display());
    assert_eq!(*line, Some(5), "{e}");
    assert!(message.contains("undefined_name"), "{message}");
    assert!(e.to_string().contains("broken.cu:5"), "{e}");
}

#[test]
fn events_time_work_and_order_two_streams() {
    let Some(gpu) = device_or_skip("events_time_work_and_order_two_streams") else { return };
    gpu.set_auto_sync(false);
    let m = api_module(&gpu);
    let busy = m.load_function("busy").unwrap();
    let (s1, s2) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let n = 1 << 14;
    let mut data = s1.clone_htod(&vec![1.0f32; n]).unwrap();
    let start = s1.record_event().unwrap();
    let (n_i, rounds) = (n as i32, 200i32);
    let mut l = s1.launch_builder(&busy);
    l.arg(&mut data).arg(&n_i).arg(&rounds);
    // SAFETY: data holds n floats and busy's i < n guard keeps every thread inside it.
    unsafe { l.launch(cfg1d(n, 256)) }.unwrap();
    let done = s1.record_event().unwrap();
    let ms = start.elapsed_ms(&done).unwrap();
    assert!(ms > 0.0 && ms < 10_000.0, "elapsed {ms} ms");

    // Reading `data` on s2 without waiting for s1 is a hazard the API reports, naming both sides.
    let e = s2.clone_dtoh(&data).unwrap_err();
    assert!(matches!(e, GpuError::Hazard(_)), "{e}");
    assert!(e.to_string().contains("`busy` on stream"), "{e}");
    s2.wait(&done).unwrap();
    let out = s2.clone_dtoh(&data).unwrap();
    assert!(out.iter().all(|&x| (x - 1.0).abs() < 1e-3), "{}", out[0]);

    // fork/join: the forked stream sees s1's work, and s1 can join it back.
    let s3 = s1.fork().unwrap();
    let copy = s3.clone_dtod(&data).unwrap();
    s1.join(&s3).unwrap();
    assert_eq!(s1.clone_dtoh(&copy).unwrap().len(), n);
    gpu.synchronize().unwrap();
}

#[test]
fn automatic_sync_orders_streams_by_itself() {
    let Some(gpu) = device_or_skip("automatic_sync_orders_streams_by_itself") else { return };
    assert!(gpu.auto_sync());
    let m = api_module(&gpu);
    let busy = m.load_function("busy").unwrap();
    let (s1, s2) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let n = 1 << 12;
    let mut data = s1.clone_htod(&vec![1.0f32; n]).unwrap();
    let (n_i, rounds) = (n as i32, 100i32);
    let mut l = s1.launch_builder(&busy);
    l.arg(&mut data).arg(&n_i).arg(&rounds);
    // SAFETY: data holds n floats and busy's i < n guard keeps every thread inside it.
    unsafe { l.launch(cfg1d(n, 256)) }.unwrap();
    assert_eq!(s2.clone_dtoh(&data).unwrap().len(), n);
    let trace = gpu.trace().unwrap();
    assert!(
        trace.ops.iter().any(|o| o.kind == OpKind::WaitEvent { automatic: true } && o.stream == s2.id()),
        "no automatic wait in the trace"
    );
}

#[test]
fn pinned_memory_copies_asynchronously() {
    let Some(gpu) = device_or_skip("pinned_memory_copies_asynchronously") else { return };
    let s = gpu.new_stream().unwrap();
    let n = 1 << 16;
    // SAFETY: every value is written through as_mut_slice just below, before any copy
    // reads it.
    let mut pinned = unsafe { gpu.alloc_pinned::<f32>(n) }.unwrap();
    for (i, x) in pinned.as_mut_slice().unwrap().iter_mut().enumerate() {
        *x = i as f32;
    }
    let mut dev = s.alloc_zeros::<f32>(n).unwrap();
    s.memcpy_htod(&pinned, &mut dev).unwrap();
    // SAFETY: memcpy_dtoh fills all n values before as_slice reads them.
    let mut back = unsafe { gpu.alloc_pinned::<f32>(n) }.unwrap();
    s.memcpy_dtoh(&dev, &mut back).unwrap();
    assert!(back.as_slice().unwrap().iter().enumerate().all(|(i, &x)| x == i as f32));
    let trace = gpu.trace().unwrap();
    assert_eq!(trace.copies().filter(|o| matches!(o.kind, OpKind::Copy { pinned: true, .. })).count(), 2);
}

#[test]
fn the_trace_records_each_operation_with_times() {
    let Some(gpu) = device_or_skip("the_trace_records_each_operation_with_times") else { return };
    let s = gpu.default_stream();
    let m = api_module(&gpu);
    gpu.clear_trace().unwrap();
    let n = 4096usize;
    {
        let a = s.clone_htod(&vec![1.0f32; n]).unwrap();
        let mut c = s.alloc_zeros::<f32>(n).unwrap();
        let f = m.load_function("vector_add").unwrap();
        let n_i = n as i32;
        let mut l = s.launch_builder(&f);
        l.arg(&a).arg(&a).arg(&mut c).arg(&n_i);
        // SAFETY: a and c hold n floats and vector_add's i < n guard keeps every thread inside
        // them.
        unsafe { l.launch(cfg1d(n, 128)) }.unwrap();
        assert_eq!(s.clone_dtoh(&c).unwrap()[n - 1], 2.0);
    }
    let t = gpu.trace().unwrap();
    let kinds: Vec<String> = t.ops.iter().map(|o| o.kind.short()).collect();
    let find = |p: &str| kinds.iter().position(|k| k.starts_with(p)).unwrap_or_else(|| panic!("no `{p}` in {kinds:?}"));
    assert!(find("alloc") < find("memcpy HtoD") && find("memcpy HtoD") < find("launch vector_add"));
    assert!(find("launch vector_add") < find("memcpy DtoH") && find("memcpy DtoH") < find("free"));
    assert_eq!(t.bytes_copied(CopyDir::HostToDevice), n * 4);
    assert_eq!(t.bytes_copied(CopyDir::DeviceToHost), n * 4);
    assert!(t.leaks().is_empty(), "leaks: {:?}", t.leaks());
    let launch = t.launches().next().unwrap();
    assert!(matches!(&launch.kind, OpKind::Launch { grid: [32, 1, 1], block: [128, 1, 1], .. }), "{:?}", launch.kind);
    for o in &t.ops {
        assert!(o.start_us.is_finite() && o.end_us >= o.start_us && o.start_us >= 0.0, "{o:?}");
    }
    // Stream order shows in the times: each copy and launch starts after the one before ends.
    let timed: Vec<_> = t.ops.iter().filter(|o| o.kind.is_copy() || o.kind.is_launch()).collect();
    for w in timed.windows(2) {
        assert!(w[1].start_us + 1e-3 >= w[0].end_us, "{:?} starts before {:?} ends", w[1].kind, w[0].kind);
    }
    println!("trace on {}:", gpu.backend());
    for o in &t.ops {
        println!("  #{:<3} s{} {:>10.1} {:>10.1} us  {}", o.index, o.stream, o.start_us, o.end_us, o.kind.short());
    }
}

#[test]
fn several_devices_when_present() {
    let Some(gpu) = device_or_skip("several_devices_when_present") else { return };
    let count = Gpu::device_count().unwrap();
    assert!(count >= 1);
    let others: Vec<Arc<Stream>> = (1..count).filter_map(|i| Gpu::with_ordinal(i).ok()).map(|g| g.default_stream()).collect();
    for s in &others {
        let d = s.clone_htod(&[7u32; 16]).unwrap();
        assert_eq!(s.clone_dtoh(&d).unwrap(), vec![7; 16]);
        // Memory of one device cannot be used on another's stream.
        let e = gpu.default_stream().clone_dtoh(&d).unwrap_err();
        assert!(e.to_string().contains("another device"), "{e}");
    }
    println!("{count} device(s) on {}", gpu.backend());
}

#[test]
fn pinned_copies_get_their_digest_once_the_host_waits() -> Result<()> {
    let Some(gpu) = device_or_skip("pinned_copies_get_their_digest_once_the_host_waits") else {
        return Ok(());
    };
    gpu.set_content_digests(true);
    let s = gpu.new_stream()?;
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let x_d = s.clone_htod(&x)?;
    // SAFETY: the two downloads fill ..400 and 400.. before as_slice reads it.
    let mut out = unsafe { gpu.alloc_pinned::<f32>(1000) }?;
    s.memcpy_dtoh(&x_d.slice(..400), &mut out.slice_mut(..400))?;
    s.memcpy_dtoh(&x_d.slice(400..), &mut out.slice_mut(400..))?;
    let host = out.as_slice()?.as_ptr() as u64;
    let trace = gpu.trace()?;
    let downloads: Vec<(Option<u64>, Option<u64>)> = trace
        .ops
        .iter()
        .filter_map(|o| match o.kind {
            OpKind::Copy { dir: CopyDir::DeviceToHost, digest, host, .. } => Some((digest, host)),
            _ => None,
        })
        .collect();
    let bytes = |v: &[f32]| gpubook::gpu::digest_of(v);
    assert_eq!(downloads, [(Some(bytes(&x[..400])), Some(host)), (Some(bytes(&x[400..])), Some(host + 1600))]);
    // An upload from pinned memory is not hashed as it is issued (that would hold the host up),
    // but at the next wait for its buffer.
    let upload_digest = |gpu: &Gpu| -> Result<Option<u64>> {
        let t = gpu.trace()?;
        Ok(t.ops
            .iter()
            .rev()
            .find_map(|o| match o.kind {
                OpKind::Copy { dir: CopyDir::HostToDevice, digest, .. } => Some(digest),
                _ => None,
            })
            .flatten())
    };
    let mut y_d = s.alloc_zeros::<f32>(1000)?;
    s.memcpy_htod(&out, &mut y_d)?;
    assert_eq!(upload_digest(&gpu)?, None);
    out.as_slice()?;
    assert_eq!(upload_digest(&gpu)?, Some(bytes(&x)));
    Ok(())
}
