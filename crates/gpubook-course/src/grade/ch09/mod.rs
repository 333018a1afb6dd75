//! Chapter 9: zero copy. The zero-copy combine must give the same bits as the copy path (same
//! kernels, same order of additions: only where the expert rows are written differs), as the
//! combine kernel wrote them, with only the inputs uploaded, no device-to-device copy in its
//! trace and one expert launch storing every row into the very buffer the combine reads (the
//! stores read from the emulator's access counts). The mapped counts must be right, reach the
//! host with no copy, never be written by the host, be one atomic add per id by as many threads
//! (the emulator's counts again), and be read only after the kernel that wrote them is done
//! (automatic synchronisation is off while the grader reads). On a GPU the rules that read
//! access counts are reported as skipped checks.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{KERNEL_DOES_THE_WORK, computed_on_the_device, uploads_are_inputs};
use super::explain::Explain;
use super::words::count;
use super::{Ctx, Failure, Tolerance, check_f32, check_values, grade};
use gpubook::ep::CombineInput;
use gpubook::gpu::digest_of;
use gpubook::gpu::{BufferId, CopyDir, Gpu, MappedHostSlice, OpKind, Result, Trace};
use std::collections::BTreeSet;

/// A random combine problem from the grader's seed.
pub fn random_combine(ctx: &mut Ctx, tokens: usize, top_k: usize, hidden: usize, experts: usize) -> CombineInput {
    let rows = tokens * top_k;
    let rng = &mut ctx.rng;
    CombineInput {
        tokens,
        top_k,
        hidden,
        experts,
        x: rng.vec_f32(rows * hidden, -2.0, 2.0),
        expert_of: (0..rows).map(|_| rng.usize(0, experts) as i32).collect(),
        weight: rng.vec_f32(rows, 0.0, 1.0),
        scale: rng.vec_f32(experts * hidden, 0.5, 1.5),
        bias: rng.vec_f32(experts * hidden, -0.5, 0.5),
    }
}

/// The combine computed on the host in float64: what the grader compares with, so an answer
/// that calls it is refused.
pub fn combine_reference(p: &CombineInput) -> Vec<f64> {
    gpubook::reference::called("gpubook_course::grade::ch09::combine_reference");
    let mut out = vec![0.0f64; p.tokens * p.hidden];
    for m in 0..p.tokens * p.top_k {
        let e = p.expert_of[m] as usize;
        for c in 0..p.hidden {
            let v = p.x[m * p.hidden + c] as f64 * p.scale[e * p.hidden + c] as f64 + p.bias[e * p.hidden + c] as f64;
            out[(m / p.top_k) * p.hidden + c] += p.weight[m] as f64 * v.max(0.0);
        }
    }
    out
}

const ZERO_COPY: &str = "zero copy: instead of staging the expert output and copying it into the send buffer, hand \
     the expert kernel a view of the send buffer itself (view_2d_mut: the payloads start HEADER_BYTES in and are one \
     message apart, so the view's row stride is the message length) and let it write there; the combine then sends \
     from the very same memory";

type CombineFn<'a> = dyn Fn(&Gpu, &CombineInput) -> Result<Vec<f32>> + 'a;

/// `combine_with_copy` (given) and `combine_zero_copy` (the exercise), both `(gpu, input) -> out`.
pub fn zero_copy_combine(
    with_copy: impl Fn(&Gpu, &CombineInput) -> Result<Vec<f32>>,
    zero_copy: impl Fn(&Gpu, &CombineInput) -> Result<Vec<f32>>,
) -> GradeReport {
    grade("ch09-zero-copy-combine", |ctx| {
        // (tokens, top_k, hidden, experts), and one shape drawn from the seed in every dimension.
        let seeded = (ctx.rng.usize(129, 513), ctx.rng.usize(1, 5), ctx.rng.usize(65, 257), ctx.rng.usize(2, 17), "drawn from the seed");
        let shapes = [(1, 1, 4, 1, "one token, one expert"), (37, 2, 33, 4, "odd hidden size"), (128, 2, 64, 8, "a batch"), seeded];
        for (tokens, top_k, hidden, experts, name) in shapes {
            let input = format!("{}, top-{top_k} of {}, hidden {hidden} ({name})", count(tokens, "token"), count(experts, "expert"));
            let p = random_combine(ctx, tokens, top_k, hidden, experts);
            let (copied, copy_trace) = run(ctx, &with_copy, &p).map_err(|e| e.or_input(format!("{input}, the copy path")))?;
            let (direct, trace) = run_explained(ctx, &zero_copy, &p, &input)?;
            check_f32("out (copy path)", &copied, &combine_reference(&p), Tolerance::sum_of(top_k + 2)).map_err(|e| e.input(&input))?;
            let (a, b): (Vec<u32>, Vec<u32>) = (direct.iter().map(|v| v.to_bits()).collect(), copied.iter().map(|v| v.to_bits()).collect());
            check_values("out", &a, &b, Some(u32::MAX)).map_err(|e| {
                Failure::new(format!("not bit-identical to the copy path: {}", e.what))
                    .concept(format!(
                        "{ZERO_COPY}. The same kernels adding in the same order give the same bits, so a difference means \
                         the rows went somewhere else: a wrong byte offset (the header is {} bytes) or row stride",
                        16
                    ))
                    .detail(e.details.join("\n"))
                    .input(&input)
            })?;
            let inputs = [
                ("x", digest_of(&p.x)),
                ("expert_of", digest_of(&p.expert_of)),
                ("weight", digest_of(&p.weight)),
                ("scale", digest_of(&p.scale)),
                ("bias", digest_of(&p.bias)),
            ];
            computed_on_the_device(&trace, "out", &direct, &inputs).map_err(|e| e.input(&input))?;
            check_no_staging(&trace, &copy_trace).map_err(|e| e.input(&input))?;
            check_expert_stores(ctx, &trace, tokens * top_k, hidden).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

fn run(ctx: &Ctx, f: &CombineFn<'_>, p: &CombineInput) -> Result<(Vec<f32>, Trace), Failure> {
    ctx.gpu.clear_trace().map_err(Failure::from)?;
    let out = ctx.call(|| f(&ctx.gpu, p))?;
    Ok((out, ctx.gpu.trace().map_err(Failure::from)?))
}

/// The zero-copy path, with the emulator's findings explained in this exercise's terms.
fn run_explained(ctx: &Ctx, f: &CombineFn<'_>, p: &CombineInput, input: &str) -> Result<(Vec<f32>, Trace), Failure> {
    let explain = Explain {
        uninitialized: Some(
            "the combine read part of the send buffer that nothing wrote: the expert rows did not all land in the \
             payload slots. They start HEADER_BYTES into each message and are one message (msg_words words) apart",
        ),
        out_of_bounds: Some(
            "the expert kernel wrote past the send buffer: a view of rows × hidden floats with a row stride of \
             msg_words starts HEADER_BYTES in and ends inside the buffer; check the offset, the stride and `ld`",
        ),
        ..Default::default()
    };
    ctx.gpu.clear_trace().map_err(Failure::from)?;
    let out = match ctx.call(|| Ok(f(&ctx.gpu, p))).map_err(|e| e.or_input(input))? {
        Ok(out) => out,
        Err(e) => {
            let concept = explain.concept_for(&e).unwrap_or(ZERO_COPY).to_string();
            return Err(Failure::from(e).concept(concept).or_input(input));
        }
    };
    Ok((out, ctx.gpu.trace().map_err(Failure::from)?))
}

/// Names the exercise's concept, unless the failure is an untouched TODO (which says what to do).
fn with_concept(f: Failure, concept: &str) -> Failure {
    if f.what.starts_with("not yet implemented") { f } else { f.concept(concept) }
}

/// No device-to-device bytes, and the expert kernel writes a buffer the combine kernel reads.
fn check_no_staging(t: &Trace, copy_path: &Trace) -> Result<(), Failure> {
    let staged = t.bytes_copied(CopyDir::DeviceToDevice);
    if staged > 0 {
        let copies = t.ops.iter().filter(|o| matches!(o.kind, OpKind::Copy { dir: CopyDir::DeviceToDevice, .. })).count();
        let plural = if copies == 1 { "copy" } else { "copies" };
        return Err(Failure::new(format!("{copies} device-to-device {plural} moved {staged} bytes: the expert output was staged"))
            .concept(ZERO_COPY)
            .detail(format!(
                "the copy path staged {} bytes; the zero-copy path should stage none",
                copy_path.bytes_copied(CopyDir::DeviceToDevice)
            )));
    }
    let written = |kernel: &str| -> BTreeSet<u64> {
        t.ops
            .iter()
            .filter_map(|o| match &o.kind {
                OpKind::Launch { kernel: k, buffers, .. } if k == kernel => {
                    Some(buffers.iter().filter(|b| b.1).map(|b| b.0).collect::<Vec<_>>())
                }
                _ => None,
            })
            .flatten()
            .collect()
    };
    let read = |kernel: &str| -> BTreeSet<u64> {
        t.ops
            .iter()
            .filter_map(|o| match &o.kind {
                OpKind::Launch { kernel: k, buffers, .. } if k == kernel => Some(buffers.iter().map(|b| b.0).collect::<Vec<_>>()),
                _ => None,
            })
            .flatten()
            .collect()
    };
    if written("expert_forward").is_disjoint(&read("combine")) {
        return Err(Failure::new("expert_forward wrote no buffer that combine reads").concept(ZERO_COPY));
    }
    // One expert launch, the one above into the buffer the combine reads: a second one (into a
    // staging buffer, say) is a staging copy with extra steps.
    let experts = t.launches().filter(|o| matches!(&o.kind, OpKind::Launch { kernel, .. } if kernel == "expert_forward")).count();
    if experts != 1 {
        return Err(Failure::new(format!(
            "expert_forward ran {}; the expert rows need one launch, into the send buffer",
            count(experts, "time")
        ))
        .concept(ZERO_COPY));
    }
    Ok(())
}

/// Why a rule that reads access counts was skipped.
const NO_COUNTS: &str = "this backend gives no access counts (the emulator's check mode does)";

/// As the emulator counts expert_forward's launch: it stored every expert row (rows × hidden
/// floats) into the buffer the combine reads. On a GPU (no counts) the check is reported as skipped.
fn check_expert_stores(ctx: &mut Ctx, t: &Trace, rows: usize, hidden: usize) -> Result<(), Failure> {
    let read_by_combine: BTreeSet<BufferId> = t
        .launches()
        .filter_map(|o| match &o.kind {
            OpKind::Launch { kernel, buffers, .. } if kernel == "combine" => Some(buffers.iter().filter(|b| !b.1).map(|b| b.0)),
            _ => None,
        })
        .flatten()
        .collect();
    for op in t.launches() {
        let OpKind::Launch { kernel, counts, .. } = &op.kind else { continue };
        if kernel != "expert_forward" {
            continue;
        }
        let Some(counts) = counts else {
            ctx.skip_check(format!("that expert_forward stored every expert row into the send buffer: {NO_COUNTS}"));
            return Ok(());
        };
        let stored: u64 =
            counts.buffers.iter().filter(|b| b.buffer.is_some_and(|id| read_by_combine.contains(&id))).map(|b| b.stores.bytes).sum();
        let want = (rows * hidden * 4) as u64;
        if stored < want {
            return Err(Failure::new(format!(
                "expert_forward stored {stored} bytes into the send buffer, where the expert rows ({rows} × {hidden} floats) \
                 take {want}"
            ))
            .concept(ZERO_COPY));
        }
    }
    Ok(())
}

const MAPPED: &str = "mapped host memory: allocate the counters with gpu.alloc_mapped, pass them to the kernel like any \
     device buffer, and wait for the kernel (stream.synchronize()) before the host reads them: there is no copy whose \
     completion would tell the host that the counts are ready";

/// `expert_counts(gpu, ids, experts) -> counts`, in mapped host memory.
pub fn expert_counts(f: impl Fn(&Gpu, &[i32], usize) -> Result<MappedHostSlice<u32>>) -> GradeReport {
    grade("ch09-expert-counts", |ctx| {
        // Past any grid sized for the largest fixed case, up to 4 times it.
        let seeded = (ctx.rng.usize(100_003 + 256, 400_012), ctx.rng.usize(65, 300), "drawn from the seed");
        for (n, experts, name) in
            [(1, 1, "one token, one expert"), (1000, 8, "1000 tokens"), (100_003, 64, "large, not a power of two"), seeded]
        {
            let input = format!("{}, {} ({name})", count(n, "token id"), count(experts, "expert"));
            // Skewed, as routing is: low ids more often.
            let ids: Vec<i32> =
                (0..n).map(|_| (ctx.rng.usize(0, experts) * ctx.rng.usize(1, experts + 1) / (experts + 1)) as i32).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let counts = ctx.call(|| f(&ctx.gpu, &ids, experts)).map_err(|e| with_concept(e, MAPPED).or_input(&input))?;
            // Read as the host would, with nothing inserting the wait for it.
            ctx.gpu.set_auto_sync(false);
            let got = counts.as_slice().map(<[u32]>::to_vec);
            ctx.gpu.set_auto_sync(true);
            let got = got.map_err(|e| Failure::from(e).concept(MAPPED).input(&input))?;
            let mut want = vec![0u32; experts];
            for &i in &ids {
                want[i as usize] += 1;
            }
            check_values("counts", &got, &want, None).map_err(|e| e.concept(MAPPED).input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let copied_back = trace.bytes_copied(CopyDir::DeviceToHost) + trace.bytes_copied(CopyDir::DeviceToDevice);
            if copied_back > 0 {
                return Err(Failure::new(format!("{copied_back} bytes were copied after the counting: the counts took a detour"))
                    .concept(format!("{MAPPED}; the kernel writes the counts straight into the mapped memory the host reads"))
                    .input(&input));
            }
            if counts.host_writes() > 0 {
                return Err(Failure::new("the host wrote the counts (as_mut_slice) it returned")
                    .concept(format!(
                        "{KERNEL_DOES_THE_WORK}: the kernel counts, with an atomicAdd per id, straight into the mapped memory \
                     (alloc_mapped zeroes it: the host never writes it)"
                    ))
                    .input(&input));
            }
            uploads_are_inputs(&trace, &[("the ids", digest_of(&ids))]).map_err(|e| e.input(&input))?;
            let wrote_mapped = trace
                .launches()
                .any(|o| matches!(&o.kind, OpKind::Launch { buffers, .. } if buffers.iter().any(|b| b.0 == counts.id() && b.1)));
            if !wrote_mapped {
                return Err(Failure::new("no kernel wrote the mapped counts that were returned").concept(MAPPED).input(&input));
            }
            counted_with_atomics(ctx, &trace, counts.id(), n).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

const ATOMICS: &str = "the work is spread over the threads: each thread reads one id and adds it with one \
     atomicAdd(&counts[id], 1) straight into the mapped memory, so that threads counting the same expert lose nothing";

/// As the emulator counts the launches that wrote the counts: one atomic add into them per id,
/// no thread making more than one. On a GPU (no counts) the check is reported as skipped.
fn counted_with_atomics(ctx: &mut Ctx, t: &Trace, counts: BufferId, ids: usize) -> Result<(), Failure> {
    let mut atomics = 0;
    for op in t.launches() {
        let OpKind::Launch { kernel, buffers, counts: access, .. } = &op.kind else { continue };
        if !buffers.iter().any(|&(b, write)| b == counts && write) {
            continue;
        }
        let Some(access) = access else {
            ctx.skip_check(format!("the atomic adds into the expert counts, one per id and thread: {NO_COUNTS}"));
            return Ok(());
        };
        atomics += access.buffers.iter().filter(|b| b.buffer == Some(counts)).map(|b| b.atomics).sum::<u64>();
        let most = access.per_thread_max.atomics;
        if most > 1 {
            return Err(Failure::new(format!(
                "one thread of `{kernel}` made {}, for {}",
                count(most as usize, "atomic add"),
                count(ids, "token id")
            ))
            .concept(ATOMICS));
        }
    }
    if atomics != ids as u64 {
        return Err(Failure::new(format!(
            "the kernels made {} into the counts for {}",
            count(atomics as usize, "atomic add"),
            count(ids, "token id")
        ))
        .concept(ATOMICS));
    }
    Ok(())
}
