//! The code chapters 7 to 9 walk through (the book includes it by anchor), run as tests so the
//! pages never show code that does not work. Without a device every test prints SKIPPED.

use gpubook::gpu::{Gpu, GpuError, LaunchConfig, OpKind, Result, Source};
use gpubook::testing::{device_or_skip, root};

fn scale_shift(gpu: &Gpu) -> Result<gpubook::gpu::Function> {
    gpu.load_module(Source::file(root().join("kernels/bench/streams.cu")))?.load_function("scale_shift")
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

#[test]
fn async_copies_from_pinned_memory() -> Result<()> {
    let Some(gpu) = device_or_skip("async_copies_from_pinned_memory") else {
        return Ok(());
    };
    let f = scale_shift(&gpu)?;
    let n = 1 << 20;
    // ANCHOR: async_copies
    let stream = gpu.new_stream()?;
    // Page-locked host memory: the copy engine reads it directly, so the copy is asynchronous.
    // SAFETY: filled just below, before any copy reads it.
    let mut x = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    x.as_mut_slice()?.fill(1.0);
    // SAFETY: the copy into it finishes before `as_slice` reads it.
    let mut y = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    // SAFETY: the copy from x fills it before the kernel reads it.
    let mut x_d = unsafe { stream.alloc::<f32>(n) }?;
    // SAFETY: the kernel writes all n values before the copy back reads them.
    let mut y_d = unsafe { stream.alloc::<f32>(n) }?;
    stream.memcpy_htod(&x, &mut x_d)?; // returns at once: the copy is queued
    let (a, b, n_i) = (2.0f32, 0.5f32, n as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&a).arg(&b).arg(&n_i);
    // SAFETY: x_d and y_d hold n floats, and the kernel's i < n guard keeps threads inside.
    unsafe { launch.launch(cfg(n)) }?; // queued behind the copy
    stream.memcpy_dtoh(&y_d, &mut y)?; // queued behind the kernel
    // ... the host is free here, while the stream works ...
    let y = y.as_slice()?; // waits for the copy into y, then lends it
    assert_eq!(y[n - 1], 2.5);
    // ANCHOR_END: async_copies
    Ok(())
}

#[test]
fn events_time_the_work_between_them() -> Result<()> {
    let Some(gpu) = device_or_skip("events_time_the_work_between_them") else {
        return Ok(());
    };
    let f = scale_shift(&gpu)?;
    let n = 1 << 20;
    let stream = gpu.default_stream();
    let x_d = stream.alloc_zeros::<f32>(n)?;
    let mut y_d = stream.alloc_zeros::<f32>(n)?;
    let (a, b, n_i) = (2.0f32, 0.5f32, n as i32);
    // ANCHOR: events
    let start = stream.record_event()?; // a marker in the stream, passed when the work before it is done
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&a).arg(&b).arg(&n_i);
    // SAFETY: x_d and y_d hold n floats, and the kernel's i < n guard keeps threads inside.
    unsafe { launch.launch(cfg(n)) }?;
    let end = stream.record_event()?;
    let ms = start.elapsed_ms(&end)?; // waits for `end`, then subtracts the device's timestamps
    println!("scale_shift over {n} floats: {:.1} µs", ms * 1e3);
    // ANCHOR_END: events
    assert!(ms > 0.0);
    Ok(())
}

#[test]
fn a_missing_event_is_a_hazard() -> Result<()> {
    let Some(gpu) = device_or_skip("a_missing_event_is_a_hazard") else {
        return Ok(());
    };
    let f = scale_shift(&gpu)?;
    let n = 1 << 16;
    let host = vec![1.0f32; n];
    let (a, b, n_i) = (2.0f32, 0.5f32, n as i32);
    // ANCHOR: hazard
    gpu.set_auto_sync(false); // order the streams yourself; the API checks, and inserts nothing
    let (copy, work) = (gpu.new_stream()?, gpu.new_stream()?);
    // SAFETY: the copy from `host` fills it before the kernel reads it.
    let mut x_d = unsafe { copy.alloc::<f32>(n) }?;
    x_d.set_label("x_d");
    // SAFETY: the kernel writes all n values.
    let mut y_d = unsafe { work.alloc::<f32>(n) }?;
    copy.memcpy_htod(&host, &mut x_d)?;
    let mut launch = work.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&a).arg(&b).arg(&n_i);
    // SAFETY: x_d and y_d hold n floats and the guard keeps threads inside; this launch is
    // refused anyway.
    let err = unsafe { launch.launch(cfg(n)) }.unwrap_err(); // nothing orders it after the copy
    println!("{err}");
    // The fix: record an event after the copy, and make the other stream wait on it.
    work.wait(&copy.record_event()?)?;
    // SAFETY: as above, and the wait now orders the kernel after the copy.
    unsafe { launch.launch(cfg(n)) }?;
    // ANCHOR_END: hazard
    assert!(matches!(err, GpuError::Hazard(_)));
    let text = err.to_string();
    assert!(text.contains("reads buffer `x_d`") && text.contains("`memcpy_htod` on stream"), "{text}");
    Ok(())
}

#[test]
fn automatic_synchronisation_inserts_the_wait() -> Result<()> {
    let Some(gpu) = device_or_skip("automatic_synchronisation_inserts_the_wait") else {
        return Ok(());
    };
    let f = scale_shift(&gpu)?;
    let n = 1 << 16;
    let host = vec![1.0f32; n];
    let (a, b, n_i) = (2.0f32, 0.5f32, n as i32);
    // ANCHOR: auto_sync
    assert!(gpu.auto_sync()); // the default, as in cudarc
    let (copy, work) = (gpu.new_stream()?, gpu.new_stream()?);
    let x_d = copy.clone_htod(&host)?;
    // SAFETY: the kernel writes all n values.
    let mut y_d = unsafe { work.alloc::<f32>(n) }?;
    gpu.clear_trace()?;
    let mut launch = work.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y_d).arg(&a).arg(&b).arg(&n_i);
    // SAFETY: x_d and y_d hold n floats, and the kernel's i < n guard keeps threads inside.
    unsafe { launch.launch(cfg(n)) }?; // the API sees x_d written on `copy`, and waits for it
    let trace = gpu.trace()?;
    for op in &trace.ops {
        println!("stream {}: {}", op.stream, op.kind.short());
    }
    // ANCHOR_END: auto_sync
    assert!(trace.ops.iter().any(|o| matches!(o.kind, OpKind::WaitEvent { automatic: true })));
    Ok(())
}

#[test]
fn the_default_stream_is_one_more_stream() -> Result<()> {
    let Some(gpu) = device_or_skip("the_default_stream_is_one_more_stream") else {
        return Ok(());
    };
    gpu.set_auto_sync(false);
    let n = 1 << 10;
    // ANCHOR: default_stream
    let default = gpu.default_stream();
    let other = gpu.new_stream()?; // non-blocking, as cudarc creates them
    let mut x_d = default.alloc_zeros::<f32>(n)?; // a memset on the default stream
    x_d.set_label("x_d");
    let err = other.memset_zeros(&mut x_d).unwrap_err(); // not ordered after it
    // ANCHOR_END: default_stream
    assert!(err.to_string().contains("on stream 0"), "{err}");
    Ok(())
}

#[test]
fn views_see_one_allocation_many_ways() -> Result<()> {
    let Some(gpu) = device_or_skip("views_see_one_allocation_many_ways") else {
        return Ok(());
    };
    let stream = gpu.default_stream();
    // ANCHOR: views
    // Four messages of 16 + 8 * 4 = 48 bytes each: a 16-byte header (four ints), then 8 floats.
    let (messages, hidden, msg_words) = (4, 8, 4 + 8);
    let mut buf = stream.alloc_zeros::<u8>(messages * msg_words * 4)?;
    {
        // The same bytes as 4-byte words (PyTorch: torch.from_blob(ptr, {n}, torch.int32)).
        let words = buf.view_as::<i32>(0, messages * msg_words)?;
        assert_eq!(words.len(), 48);
        // Every message's payload: a 4 × 8 matrix of floats, 16 bytes in, rows 12 words apart
        // (from_blob(ptr + 16, {4, 8}, {12, 1})). A kernel gets its first element and the stride.
        let payload = buf.view_2d::<f32>(16, messages, hidden, msg_words)?;
        assert_eq!((payload.rows(), payload.cols(), payload.row_stride()), (4, 8, 12));
        assert_eq!(payload.row(1).device_ptr(), buf.device_ptr() + 48 + 16);
    }
    // The GPU's rules hold: a float must be 4-byte aligned, and a view must fit.
    assert!(buf.view_as::<f32>(2, 4).is_err());
    assert!(buf.view_2d::<f32>(16, messages, hidden, hidden - 1).is_err()); // rows would overlap
    // A sub-slice is a view too: the third message's bytes, written in place.
    stream.memset_bytes(&mut buf.slice_mut(96..144), 0xFF)?;
    // ANCHOR_END: views
    let bytes = stream.clone_dtoh(&buf)?;
    assert!(bytes[96..144].iter().all(|&b| b == 0xFF) && bytes[..96].iter().all(|&b| b == 0));
    Ok(())
}

#[test]
fn mapped_memory_is_read_by_the_host_with_no_copy() -> Result<()> {
    let Some(gpu) = device_or_skip("mapped_memory_is_read_by_the_host_with_no_copy") else {
        return Ok(());
    };
    let f = scale_shift(&gpu)?;
    let stream = gpu.default_stream();
    let x_d = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0])?;
    let n_i = 4i32;
    let (a, b) = (10.0f32, 0.0f32);
    gpu.set_auto_sync(false);
    // ANCHOR: mapped
    let mut y = gpu.alloc_mapped::<f32>(4)?; // page-locked host memory with a device address
    y.set_label("y");
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x_d).arg(&mut y).arg(&a).arg(&b).arg(&n_i); // the kernel writes over the bus
    // SAFETY: x_d and y hold 4 floats, and the kernel's i < n guard keeps threads inside.
    unsafe { launch.launch(cfg(4)) }?;
    assert!(y.as_slice().is_err()); // a hazard: the kernel may still be writing
    stream.synchronize()?; // no copy will say "done": wait for the kernel itself
    assert_eq!(y.as_slice()?, &[10.0, 20.0, 30.0, 40.0]);
    // ANCHOR_END: mapped
    let t = gpu.trace()?;
    assert_eq!(t.copies().filter(|o| matches!(o.kind, OpKind::Copy { dir: gpubook::gpu::CopyDir::DeviceToHost, .. })).count(), 0);
    Ok(())
}

#[test]
fn pinned_views_carry_chunks_on_several_streams() -> Result<()> {
    let Some(gpu) = device_or_skip("pinned_views_carry_chunks_on_several_streams") else {
        return Ok(());
    };
    let n = 1 << 12;
    // SAFETY: every value is written just below, before any copy reads it.
    let mut host = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    for (i, v) in host.as_mut_slice()?.iter_mut().enumerate() {
        *v = i as f32;
    }
    // SAFETY: the two copies fill both halves before `as_slice` reads it.
    let mut back = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    let (s0, s1) = (gpu.new_stream()?, gpu.new_stream()?);
    let mut d0 = s0.alloc_zeros::<f32>(n / 2)?;
    let mut d1 = s1.alloc_zeros::<f32>(n / 2)?;
    s0.memcpy_htod(&host.slice(..n / 2), &mut d0)?;
    s1.memcpy_htod(&host.slice(n / 2..), &mut d1)?;
    s0.memcpy_dtoh(&d0, &mut back.slice_mut(..n / 2))?;
    s1.memcpy_dtoh(&d1, &mut back.slice_mut(n / 2..))?;
    // Waits for the copies on both streams.
    assert_eq!(back.as_slice()?, host.as_slice()?);
    Ok(())
}
