//! Chapter 7: streams and events. With automatic synchronisation off, the API's ordering check
//! turns every missing event into a `Hazard` that names the buffer and both operations; the
//! grader adds what the exercise is about, and checks that the answer is not "wait for
//! everything" (a host synchronisation, or streams that take turns), nor a way around the
//! events: each round's y is what its kernel wrote, one x and one y are reused every round (the
//! write-after-read waits protect that reuse), and each round is one upload, one launch and one
//! download, so no extra copy can pass for the rounds' overlap.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{uploads_are_inputs, written_by_a_kernel};
use super::words::count;
use super::{Failure, Tolerance, check_f32, grade};
use gpubook::gpu::digest_of;
use gpubook::gpu::{BufferId, CopyDir, Gpu, OpKind, Result, Trace};
use std::collections::BTreeSet;

const EVENTS: &str = "with automatic synchronisation off, each buffer that one stream writes and another then reads \
     (or overwrites) needs an event between the two: record it on the first stream after the first operation, make \
     the second stream wait on it before the second. Reuse counts too: next round's upload overwrites x, which this \
     round's kernel reads, and next round's kernel overwrites y, which this round's download reads";

/// `three_streams(gpu, rounds, a, b) -> ys`: y = a·x + b per round, over three streams.
pub fn three_streams(f: impl Fn(&Gpu, &[Vec<f32>], f32, f32) -> Result<Vec<Vec<f32>>>) -> GradeReport {
    grade("ch07-three-streams", |ctx| {
        let large = if ctx.gpu.backend() == gpubook::gpu::BackendKind::Cuda { 1 << 22 } else { 1 << 18 };
        let seeded = (ctx.rng.usize(1001, 100_000), ctx.rng.usize(2, 7));
        let seeded_name = format!("{}, drawn from the seed", count(seeded.1, "round"));
        // Only the large case can show overlap: small copies end before the host issues the next.
        for (n, rounds, name) in [
            (1, 2, "one element, two rounds"),
            (1000, 3, "1000 elements, three rounds"),
            (seeded.0, seeded.1, seeded_name.as_str()),
            (large, 4, "large, four rounds"),
        ] {
            let input = format!("n = {n} ({name})");
            let xs: Vec<Vec<f32>> = (0..rounds).map(|_| ctx.rng.vec_f32(n, -10.0, 10.0)).collect();
            let (a, b) = (ctx.rng.f32(0.5, 2.0), ctx.rng.f32(-1.0, 1.0));
            ctx.gpu.set_auto_sync(false);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let ys = ctx.call(|| f(&ctx.gpu, &xs, a, b)).map_err(|e| explain(e).or_input(&input))?;
            if ctx.gpu.auto_sync() {
                return Err(Failure::new("automatic synchronisation was switched back on")
                    .concept("this exercise is about placing the events yourself: leave gpu.set_auto_sync(false) as it is")
                    .input(&input));
            }
            if ys.len() != rounds {
                return Err(Failure::new(format!("{} rounds of output for {rounds} rounds of input", ys.len())).input(&input));
            }
            for (r, (x, y)) in xs.iter().zip(&ys).enumerate() {
                let want: Vec<f64> = x.iter().map(|&v| a as f64 * v as f64 + b as f64).collect();
                check_f32(&format!("round {r}'s y"), y, &want, Tolerance::F32).map_err(|e| e.input(&input).concept(EVENTS))?;
            }
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let inputs: Vec<(&str, u64)> = xs.iter().map(|x| ("the rounds' x", digest_of(x))).collect();
            uploads_are_inputs(&trace, &inputs).map_err(|e| e.input(&input))?;
            for (r, y) in ys.iter().enumerate() {
                written_by_a_kernel(&trace, &format!("round {r}'s y"), y).map_err(|e| e.input(&input))?;
            }
            check_streams(&trace).map_err(|e| e.input(&input))?;
            check_rounds(&trace, rounds).map_err(|e| e.input(&input))?;
            if n == large {
                check_pipelined(&trace).map_err(|e| e.input(&input))?;
            }
        }
        ctx.gpu.set_auto_sync(true);
        Ok(())
    })
}

/// A hazard is the lesson itself: say what the exercise wants around the API's message.
fn explain(f: Failure) -> Failure {
    if f.details.iter().any(|d| d.starts_with("cross-stream hazard")) {
        return f.concept(EVENTS);
    }
    f
}

/// Uploads, kernels and downloads each on their own stream, and the host never waiting.
fn check_streams(t: &Trace) -> Result<(), Failure> {
    let streams_of = |pick: &dyn Fn(&OpKind) -> bool| -> std::collections::BTreeSet<u32> {
        t.ops.iter().filter(|o| pick(&o.kind)).map(|o| o.stream).collect()
    };
    let up = streams_of(&|k| matches!(k, OpKind::Copy { dir: CopyDir::HostToDevice, .. }));
    let work = streams_of(&|k| k.is_launch());
    let down = streams_of(&|k| matches!(k, OpKind::Copy { dir: CopyDir::DeviceToHost, .. }));
    let separate = up.len() == 1 && work.len() == 1 && down.len() == 1 && up != work && work != down && up != down;
    if !separate {
        return Err(Failure::new(format!(
            "uploads ran on stream(s) {up:?}, kernels on {work:?}, downloads on {down:?}: the exercise gives each its own stream"
        ))
        .concept("keep the three streams as given (up, work, down); the exercise is the events between them"));
    }
    // Inside the rounds: from the first upload to the last download (reading the results waits).
    let first = t.ops.iter().position(|o| matches!(o.kind, OpKind::Copy { dir: CopyDir::HostToDevice, .. })).unwrap_or(0);
    let last = t.ops.iter().rposition(|o| matches!(o.kind, OpKind::Copy { dir: CopyDir::DeviceToHost, .. })).unwrap_or(0);
    let waits =
        |o: &&gpubook::gpu::TraceOp| matches!(o.kind, OpKind::SynchronizeStream | OpKind::SynchronizeDevice | OpKind::SynchronizeEvent);
    if let Some(op) = t.ops[first..last.max(first)].iter().find(waits) {
        return Err(Failure::new(format!("the host waited for the device (`{}`) inside the rounds", op.kind.short())).concept(
            "a host synchronisation orders everything, so it hides the missing events, but the host and the streams then \
             take turns; order the streams with events and let the host run ahead",
        ));
    }
    Ok(())
}

/// One upload, one launch and one download per round, into one x and out of one y.
fn check_rounds(t: &Trace, rounds: usize) -> Result<(), Failure> {
    let copies = |dir: CopyDir| -> Vec<&OpKind> {
        t.ops.iter().map(|o| &o.kind).filter(|k| matches!(k, OpKind::Copy { dir: d, .. } if *d == dir)).collect()
    };
    let (ups, downs) = (copies(CopyDir::HostToDevice), copies(CopyDir::DeviceToHost));
    let launches = t.launches().count();
    if ups.len() != rounds || launches != rounds || downs.len() != rounds {
        return Err(Failure::new(format!(
            "{}, {} and {} for {}",
            count(ups.len(), "upload"),
            count(launches, "kernel launch"),
            count(downs.len(), "download"),
            count(rounds, "round")
        ))
        .concept(
            "each round is one upload of x, one launch of axpb and one download of y, as the exercise issues them: the \
             exercise is the events between them (an extra copy is not the rounds overlapping)",
        ));
    }
    let buffers =
        |ks: &[&OpKind], pick: fn(&OpKind) -> Option<BufferId>| -> BTreeSet<BufferId> { ks.iter().filter_map(|k| pick(k)).collect() };
    let xs = buffers(&ups, |k| if let OpKind::Copy { dst, .. } = k { *dst } else { None });
    let ys = buffers(&downs, |k| if let OpKind::Copy { src, .. } = k { *src } else { None });
    if xs.len() > 1 || ys.len() > 1 {
        return Err(Failure::new(format!(
            "the rounds used {} for x and {} for y",
            count(xs.len(), "device buffer"),
            count(ys.len(), "device buffer")
        ))
        .concept(
            "one x and one y on the device, reused every round: that reuse is what the write-after-read waits are for \
             (next round's upload overwrites x, which this round's kernel reads); a fresh buffer per round hides the \
             problem instead of solving it",
        ));
    }
    Ok(())
}

/// Some upload of a later round overlaps a download of an earlier one: the rounds pipeline.
fn check_pipelined(t: &Trace) -> Result<(), Failure> {
    let is = |d: CopyDir| move |o: &gpubook::gpu::TraceOp| matches!(o.kind, OpKind::Copy { dir, .. } if dir == d);
    let overlap = t.overlap_us(is(CopyDir::HostToDevice), is(CopyDir::DeviceToHost));
    if overlap <= 0.0 {
        return Err(Failure::new("the rounds ran one after another: no upload overlapped any download").concept(
            "wait only for what each operation needs: the next upload needs only this round's kernel to have read x, \
             not this round's download; too many waits make the streams take turns",
        ));
    }
    Ok(())
}
