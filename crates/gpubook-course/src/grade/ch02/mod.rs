//! Chapter 2: device memory. Beyond the values, these graders read the trace for what the chapter
//! teaches: what was copied which way and how many bytes, how big each allocation was, whether the
//! data stayed on the device between launches, and whether every buffer was freed.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{computed_on_the_device, written_by_a_kernel};
use super::words::count;
use super::{Failure, Tolerance, check_f32, grade};
use gpubook::gpu::digest_of;
use gpubook::gpu::{CopyDir, Gpu, OpKind, Result, Trace};

const ELEMENTS: &str = "gpubook and cudarc size buffers in elements of their type: alloc::<f32>(n) is n floats, 4n bytes. \
     cudaMalloc counts bytes (n * sizeof(float)); a byte count given as an element count asks for 4× the memory";

/// The sizes every chapter-2 grader tries: the edge sizes for blocks of 256, and one past a block
/// of 1024 (`LaunchConfig::for_num_elems` uses 1024).
fn sizes(rng: &mut super::Rng) -> Vec<(usize, String)> {
    let mut v = super::sizes(rng, 256, 100_003);
    v.insert(v.len() - 2, (1025, "1024 + 1".into()));
    v
}

/// `axpy(gpu, a, x, y)`: y ← a·x + y, with y written back into the caller's slice.
pub fn axpy(f: impl Fn(&Gpu, f32, &[f32], &mut [f32]) -> Result<()>) -> GradeReport {
    grade("ch02-axpy", |ctx| {
        for (n, name) in sizes(&mut ctx.rng) {
            // Asymmetric data: x and y on different scales, so mixing them up shows.
            let a = ctx.rng.f32(-4.0, 4.0);
            let x = ctx.rng.vec_f32(n, -100.0, 100.0);
            let y = ctx.rng.vec_f32(n, -1000.0, 1000.0);
            let input = format!("n = {n} ({name}), a = {a}");
            let mut y_out = y.clone();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            ctx.call(|| f(&ctx.gpu, a, &x, &mut y_out)).map_err(|e| e.or_input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;

            let bytes = 4 * n;
            let (to_dev, to_host) = (trace.bytes_copied(CopyDir::HostToDevice), trace.bytes_copied(CopyDir::DeviceToHost));
            const COPIES: &str = "copy each input to the device once (clone_htod: cudaMalloc + cudaMemcpy HostToDevice) \
                 and only the output back (memcpy_dtoh: cudaMemcpy DeviceToHost)";
            if to_host == 0 {
                return Err(Failure::new("nothing was copied device→host, so `y` still holds its old values")
                    .input(input)
                    .detail(story(&trace))
                    .concept(
                        "a copy's direction is part of its name: results come home device→host with \
                         stream.memcpy_dtoh(&y_dev, y) (cudaMemcpyDeviceToHost); memcpy_htod copies the other way",
                    ));
            }
            if to_dev != 2 * bytes {
                return Err(Failure::new(format!(
                    "{to_dev} bytes were copied host→device; x and y are 2 × {n} floats × 4 bytes = {}",
                    2 * bytes
                ))
                .input(input)
                .detail(story(&trace))
                .concept(COPIES));
            }
            if to_host != bytes {
                let what = if to_host == 2 * bytes {
                    format!("{to_host} bytes were copied device→host: x came back too, but only y changed ({bytes} bytes)")
                } else {
                    format!("{to_host} bytes were copied device→host; y is {n} floats × 4 bytes = {bytes}")
                };
                return Err(Failure::new(what).input(input).detail(story(&trace)).concept(COPIES));
            }
            no_leaks(&trace).map_err(|e| e.input(&input))?;

            let want: Vec<f64> = x.iter().zip(&y).map(|(&x, &y)| a as f64 * x as f64 + y as f64).collect();
            // |a·x| and |y| reach ~1400, where one float32 rounding is ~1e-4 in absolute terms.
            check_f32("y", &y_out, &want, Tolerance { abs: 5e-4, rel: 1e-5 })
                .map_err(|e| e.input(&input).concept("launch the kernel on the device copies of x and y, then copy y back"))?;
            computed_on_the_device(&trace, "y", &y_out, &[("x", digest_of(&x)), ("y", digest_of(&y))]).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// `normalize(gpu, pixels) -> out`: `out[i] = pixels[i] / 255`, with n bytes in and 4n bytes out.
pub fn normalize(f: impl Fn(&Gpu, &[u8]) -> Result<Vec<f32>>) -> GradeReport {
    grade("ch02-normalize", |ctx| {
        for (n, name) in sizes(&mut ctx.rng) {
            let mut pixels: Vec<u8> = (0..n).map(|_| ctx.rng.next_u64() as u8).collect();
            // The extremes, where an off-by-one in the scale shows.
            pixels[0] = 255;
            if n > 1 {
                pixels[n - 1] = 0;
            }
            let input = format!("n = {n} ({name})");
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let out = ctx.call(|| f(&ctx.gpu, &pixels)).map_err(|e| e.or_input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;

            allocations_are(&trace, &[n, 4 * n], &format!("{n} bytes for n u8 pixels and {} bytes for n f32 results", 4 * n))
                .map_err(|e| e.input(&input))?;
            let to_dev = trace.bytes_copied(CopyDir::HostToDevice);
            if to_dev != n {
                let what = if to_dev == 4 * n {
                    format!("the pixels crossed as {to_dev} bytes, four per pixel; as u8 they are {n} bytes")
                } else {
                    format!("{to_dev} bytes were copied host→device for {}", count(n, "one-byte pixel"))
                };
                return Err(Failure::new(what).input(input).detail(story(&trace)).concept(
                    "a copy costs its bytes: send the pixels as they are, one byte each (clone_htod(pixels)), \
                     and widen them to floats on the device",
                ));
            }
            let to_host = trace.bytes_copied(CopyDir::DeviceToHost);
            if to_host != 4 * n {
                return Err(Failure::new(format!(
                    "{to_host} bytes were copied device→host for {} ({} bytes)",
                    count(n, "f32 result"),
                    4 * n
                ))
                .input(input)
                .detail(story(&trace))
                .concept("copy the result back once: n floats, 4 bytes each"));
            }
            no_leaks(&trace).map_err(|e| e.input(&input))?;

            let want: Vec<f64> = pixels.iter().map(|&p| (p as f32 / 255.0) as f64).collect();
            check_f32("out", &out, &want, Tolerance::F32)
                .map_err(|e| e.input(&input).concept("launch the kernel on the device copy of the pixels and a result buffer of n f32s"))?;
            computed_on_the_device(&trace, "out", &out, &[("pixels", digest_of(&pixels))]).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// `fill(gpu, n, value) -> out`: n copies of `value`, made on the device with no host data.
pub fn fill(f: impl Fn(&Gpu, usize, f32) -> Result<Vec<f32>>) -> GradeReport {
    grade("ch02-fill", |ctx| {
        let random = ctx.rng.f32(-100.0, 100.0);
        // 1.0 first: the value people try with memset. 0.0 is the one value memset can make.
        let values = [1.0, -2.5, random, 0.0, 3.0e-3, random];
        for ((n, name), value) in sizes(&mut ctx.rng).into_iter().zip(values.into_iter().cycle()) {
            let input = format!("n = {n} ({name}), value = {value}");
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let out = ctx.call(|| f(&ctx.gpu, n, value)).map_err(|e| e.or_input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;

            allocations_are(&trace, &[4 * n], &format!("{} bytes for n f32s", 4 * n)).map_err(|e| e.input(&input))?;
            if let Some(byte) = byte_pattern(&out, value) {
                let got = out[0];
                return Err(Failure::new(format!(
                    "every element came back as {got:e} (bits {:#010x}: the byte {byte:#04x} four times), not {value}",
                    got.to_bits()
                ))
                .input(input)
                .concept(
                    "memset (cudaMemset, memset_bytes) sets bytes, not elements: it repeats one byte value in every byte \
                     of every float. Only 0.0 (all bytes zero) can be made that way; other values need a kernel that \
                     stores whole floats",
                ));
            }
            let want = vec![value as f64; n];
            check_f32("out", &out, &want, Tolerance::EXACT)
                .map_err(|e| e.input(&input).concept("launch `fill` over all n elements, passing the value as an argument"))?;
            let to_dev = trace.bytes_copied(CopyDir::HostToDevice);
            if to_dev != 0 {
                return Err(Failure::new(format!("{to_dev} bytes were copied host→device to fill {} with one value", count(n, "float")))
                    .input(input)
                    .detail(story(&trace))
                    .concept(
                        "a value can travel as a kernel argument (.arg(&value)): a host vector of n copies sends 4n bytes \
                         over the bus for nothing",
                    ));
            }
            let to_host = trace.bytes_copied(CopyDir::DeviceToHost);
            if to_host != 4 * n {
                return Err(Failure::new(format!("{to_host} bytes were copied device→host for {} ({} bytes)", count(n, "f32"), 4 * n))
                    .input(input)
                    .detail(story(&trace))
                    .concept("copy the result back once: n floats, 4 bytes each"));
            }
            no_leaks(&trace).map_err(|e| e.input(&input))?;
            written_by_a_kernel(&trace, "out", &out).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// The byte every byte of every element holds, when that is the whole story of `out` and it is
/// not `value`: the signature of a byte-wise memset.
fn byte_pattern(out: &[f32], value: f32) -> Option<u8> {
    let bits = out.first()?.to_bits();
    let byte = bits as u8;
    let repeated = bits == u32::from_ne_bytes([byte; 4]);
    // 0xFF everywhere is the grader's poison: "never written", which check_f32 explains better.
    (repeated && byte != 0xFF && bits != value.to_bits() && out.iter().all(|x| x.to_bits() == bits)).then_some(byte)
}

/// `smooth(gpu, x, k) -> y`: k steps of 3-point smoothing, with the data on the device throughout.
pub fn smooth(f: impl Fn(&Gpu, &[f32], usize) -> Result<Vec<f32>>) -> GradeReport {
    grade("ch02-stay-on-device", |ctx| {
        let mut cases: Vec<(usize, usize, String)> =
            sizes(&mut ctx.rng).into_iter().map(|(n, name)| (n, ctx.rng.usize(2, 6), name)).collect();
        cases.push((1000, 0, "k = 0: nothing to do".into()));
        cases.push((300, 1, "a single step".into()));
        cases.push((2000, 17, "many steps".into()));
        for (n, k, name) in cases {
            // Asymmetric data: a spike at the left end, so the edge rule and the direction of
            // each neighbour show.
            let mut x = ctx.rng.vec_f32(n, -100.0, 100.0);
            x[0] = 1000.0;
            let input = format!("n = {n} ({name}), k = {k} steps");
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call(|| f(&ctx.gpu, &x, k)).map_err(|e| e.or_input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;

            let launches: Vec<usize> = trace.launches().map(|o| o.index).collect();
            if launches.len() != k {
                return Err(Failure::new(format!("{} kernel launches for k = {k} steps", launches.len()))
                    .input(input)
                    .concept("one launch per step: the loop runs on the host and each iteration queues one kernel on the stream"));
            }
            let want: Vec<f64> = smooth_reference(&x, k).into_iter().map(f64::from).collect();
            check_f32("result", &got, &want, Tolerance { abs: 1e-4, rel: 1e-5 }).map_err(|e| {
                e.input(&input).concept(
                    "each step reads the previous step's output and writes the other buffer; after the last step, \
                     copy back the buffer that step wrote",
                )
            })?;
            if k > 0 {
                computed_on_the_device(&trace, "the result", &got, &[("x", digest_of(&x))]).map_err(|e| e.input(&input))?;
            }
            if let (Some(&first), Some(&last)) = (launches.first(), launches.last()) {
                between_launches(&trace, first, last, n).map_err(|e| e.input(&input))?;
                let allocs = trace.ops.iter().filter(|o| matches!(o.kind, OpKind::Alloc { .. })).count();
                if allocs > 2 {
                    return Err(Failure::new(format!("{allocs} device buffers were allocated for {k} steps"))
                        .input(input)
                        .detail(story(&trace))
                        .concept(
                            "allocate the two buffers once, before the loop, and reuse them: an allocation costs far \
                             more than reusing a buffer you have, and the loop needs no new memory",
                        ));
                }
                let (to_dev, to_host) = (trace.bytes_copied(CopyDir::HostToDevice), trace.bytes_copied(CopyDir::DeviceToHost));
                if to_dev != 4 * n || to_host != 4 * n {
                    return Err(Failure::new(format!(
                        "{to_dev} bytes were copied host→device and {to_host} device→host; x and the result are {} bytes each",
                        4 * n
                    ))
                    .input(input)
                    .detail(story(&trace))
                    .concept("copy x in once before the loop and the result out once after it"));
                }
            }
            no_leaks(&trace).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// No copy may come between the first and the last launch: not a trip to the host and back, and
/// not a device-to-device copy that a swap of two handles would make unnecessary.
fn between_launches(trace: &Trace, first: usize, last: usize, n: usize) -> Result<(), Failure> {
    let copies: Vec<&OpKind> = trace.ops[first..=last].iter().map(|o| &o.kind).filter(|k| k.is_copy()).collect();
    let dir_count = |want: CopyDir| copies.iter().filter(|k| matches!(k, OpKind::Copy { dir, .. } if *dir == want)).count();
    let (down, up, across) = (dir_count(CopyDir::HostToDevice), dir_count(CopyDir::DeviceToHost), dir_count(CopyDir::DeviceToDevice));
    if down + up > 0 {
        return Err(Failure::new(format!(
            "the data went to the host and back between launches: {} and {} ({} bytes each) came between the \
             first launch and the last",
            count(up, "device→host copy"),
            count(down, "host→device copy"),
            4 * n
        ))
        .detail(story(trace))
        .concept(
            "keep the data on the device between launches: launches on one stream run in order, so each one can read \
             the buffer the previous one wrote. Copy in once before the loop and out once after it",
        ));
    }
    if across > 0 {
        return Err(Failure::new(format!("{} came between the launches", count(across, "device→device copy")))
            .detail(story(trace))
            .concept(
                "swap the two buffers (std::mem::swap(&mut cur, &mut next)) instead of copying one into the other: \
                 a swap exchanges two handles and moves no data",
            ));
    }
    Ok(())
}

/// What the kernel computes, step by step in f32, in the kernel's order of operations.
fn smooth_reference(x: &[f32], k: usize) -> Vec<f32> {
    let n = x.len();
    let mut cur = x.to_vec();
    for _ in 0..k {
        cur = (0..n).map(|i| (cur[i.saturating_sub(1)] + cur[i] + cur[(i + 1).min(n - 1)]) / 3.0).collect();
    }
    cur
}

/// Every allocation must have one of the sizes `want` (in bytes); `what` says what they hold.
fn allocations_are(trace: &Trace, want: &[usize], what: &str) -> Result<(), Failure> {
    let sizes: Vec<usize> =
        trace.ops.iter().filter_map(|o| if let OpKind::Alloc { bytes, .. } = o.kind { Some(bytes) } else { None }).collect();
    let Some(&odd) = sizes.iter().find(|b| !want.contains(b)) else { return Ok(()) };
    let f32_bytes = want.iter().max().copied().unwrap_or(0);
    let what_went_wrong = if odd == 4 * f32_bytes && f32_bytes > 0 {
        format!(
            "a device buffer of {odd} bytes was allocated: that is {} where {} {} needed (bytes given as an element count?)",
            count(odd / 4, "f32"),
            f32_bytes / 4,
            if f32_bytes == 4 { "was" } else { "were" }
        )
    } else {
        format!("a device buffer of {odd} bytes was allocated; the exercise needs {what}")
    };
    Err(Failure::new(what_went_wrong).detail(format!("allocations (bytes): {sizes:?}")).concept(ELEMENTS))
}

/// Every allocation of the call must have been freed by the time it returned. Buffers are named
/// by their place among the call's allocations, which is how a learner can find them in the code.
pub(crate) fn no_leaks(trace: &Trace) -> Result<(), Failure> {
    let leaks = trace.leaks();
    if leaks.is_empty() {
        return Ok(());
    }
    let allocs: Vec<_> =
        trace.ops.iter().filter_map(|o| if let OpKind::Alloc { buffer, .. } = o.kind { Some(buffer) } else { None }).collect();
    let list: Vec<String> = leaks
        .iter()
        .map(|(id, bytes, label)| {
            let nth = allocs.iter().position(|b| b == id).map_or(0, |p| p + 1);
            format!("{label}, {bytes} bytes, allocation {nth} of {}", allocs.len())
        })
        .collect();
    let what = format!("{} never freed: {}", if leaks.len() == 1 { "a device buffer was" } else { "device buffers were" }, list.join("; "));
    Err(Failure::new(what).concept(
        "every allocation needs a free (cudaFree). A DeviceSlice frees itself when it is dropped, so a leak means it \
         was never dropped: forgotten (std::mem::forget, Box::leak) or kept alive beyond the call",
    ))
}

/// The call's operations in order, as evidence for a report: "trace: alloc 400 B → memcpy HtoD
/// 400 B → launch ..." (the grader's own poison fills and host waits left out; repeats counted).
pub(crate) fn story(trace: &Trace) -> String {
    let mut steps: Vec<(String, usize)> = Vec::new();
    for op in &trace.ops {
        let shown = match &op.kind {
            OpKind::Memset { value: 0xFF, .. } | OpKind::SynchronizeStream | OpKind::SynchronizeDevice | OpKind::SynchronizeEvent => {
                continue;
            }
            OpKind::Launch { kernel, .. } => format!("launch {kernel}"),
            kind => kind.short(),
        };
        match steps.last_mut() {
            Some((last, count)) if *last == shown => *count += 1,
            _ => steps.push((shown, 1)),
        }
    }
    const MAX: usize = 16;
    let mut parts: Vec<String> = steps.iter().take(MAX).map(|(s, c)| if *c > 1 { format!("{s} ×{c}") } else { s.clone() }).collect();
    if steps.len() > MAX {
        parts.push(format!("… {} more", steps.len() - MAX));
    }
    format!("trace: {}", parts.join(" → "))
}
