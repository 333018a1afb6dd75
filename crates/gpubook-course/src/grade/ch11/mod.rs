//! Chapter 11: DualPipe. The schedule generator is graded like chapter 10's 1F1B, against
//! `gpubook::sim`; the chunk pair runs on the device, and its trace says how much of the
//! communication ran under computation.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::ch10::{Teaching, check_schedule};
use super::{Failure, Tolerance, check_f32, grade};
use gpubook::chunk_pair::{self, ChunkPair, PairConfig};
use gpubook::gpu::{Result, Stream, Trace};
use gpubook::sim::{Layout, Op, ScheduleKind};
use gpubook_labs::chunk_pair::{Overlap, Plan, is_communication, is_compute};

const DUALPIPE: Teaching = Teaching {
    shape: "DualPipe's program for a rank at distance h from its pipeline's entry (h = min(rank, PP-1-rank)), with \
            half = PP/2, edge = half-h-1 and M = N/2 micro-batches per direction: 2·edge × F0; h+1 × (F0 F1); edge × \
            (B1z W F1); M-2·half+h+1 × ((F0B1) (F1B0)), the middle ranks' first (F0B1) split into F0 then B1; edge × \
            (B1 (F1B0)); h+1 × (B1 B0) with the second h+1 of those 2(h+1) ops as Bz; edge × (W B0z); h+1 × W",
    deadlock: "an op runs only once its inputs exist (a forward after the previous stage's forward, a backward after this \
               stage's forward and the next stage's backward, W after its Bz); the deadlock lists who waits for what. \
               Ranks r and PP-1-r run the same program: chunk 0 is the rank's stage in the first half of its own \
               direction's pipeline, h = min(rank, PP-1-rank)",
};

/// `dualpipe(pp, n) -> programs`.
pub fn dualpipe(f: impl Fn(usize, usize) -> Vec<Vec<Op>>) -> GradeReport {
    grade("ch11-dualpipe", |ctx| {
        // A shape from the seed, beyond the fixed ones: PP up to 16, N/2 up to 3·PP.
        let pp = 2 * ctx.rng.usize(1, 9);
        let random = (pp, 2 * ctx.rng.usize(pp, 3 * pp + 1));
        for (pp, n) in [(4, 8), (2, 4), (4, 12), (6, 12), (8, 20), (8, 16), random] {
            let input = format!("PP = {pp}, N = {n} ({} micro-batches from each end)", n / 2);
            let programs = ctx.call(|| Ok(f(pp, n))).map_err(|e| e.or_input(&input))?;
            let reference = ScheduleKind::DualPipe.generate(pp, n).expect("a valid shape");
            let layout = Layout::Dual { ranks: pp, microbatches_per_direction: n / 2 };
            check_schedule(&reference, layout, programs, &DUALPIPE).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// The fraction of the communication the chunk pair must hide, on the emulator's timeline and
/// on a GPU (see `Overlap::hidden_against`).
pub const HIDDEN_AT_LEAST: f64 = 0.8;

const ORDER: &str = "each step must run after the step it reads from (Step::after): on the same stream, issue order \
     does it; across streams it takes an event recorded after the producer and waited on before the consumer";

const OVERLAP: &str = "DualPipe's overlap: each communication of one chunk runs beside a computation of the other: \
     ATTN(F) ‖ COMBINE(B), MLP(B) ‖ DISPATCH(F), MLP(F) ‖ DISPATCH(B), ATTN(B) ‖ COMBINE(F). A stream runs its work \
     in issue order, so issue the steps in that order too";

/// `chunk_pair(pair, compute, comm)`: issue the pair's eight steps on the two streams.
pub fn chunk_pair(f: impl Fn(&mut ChunkPair, &Stream, &Stream) -> Result<()>) -> GradeReport {
    grade("ch11-chunk-pair", |ctx| {
        let large = chunk_pair::default_len(&ctx.gpu);
        let config = PairConfig::for_device(&ctx.gpu);
        // The fastest of a few runs on a GPU, for the learner's order and the baseline alike.
        let reps = chunk_pair::default_reps(&ctx.gpu);
        for (n, name) in
            [(1, "a single token".to_string()), (1000, "1000 elements".to_string()), (large, format!("{large} elements, timed"))]
        {
            let input = format!("n = {n} ({name})");
            let tokens = ctx.rng.vec_f32(n, -1.0, 1.0);
            let grads = ctx.rng.vec_f32(n, -1.0, 1.0);
            let mut pair = ChunkPair::new(&ctx.gpu, &tokens, &grads, config).map_err(|e| Failure::from(e).input(&input))?;
            let mut best: Option<(Overlap, Trace)> = None;
            for _ in 0..if n == large { reps } else { 1 } {
                let (compute, comm) = (ctx.gpu.new_stream().map_err(Failure::from)?, ctx.gpu.new_stream().map_err(Failure::from)?);
                ctx.gpu.clear_trace().map_err(Failure::from)?;
                // The learner places the events: an unordered use of a buffer is an error, not a silent wait.
                ctx.gpu.set_auto_sync(false);
                let ran = ctx.call(|| f(&mut pair, &compute, &comm));
                ctx.gpu.set_auto_sync(true);
                ran.map_err(|e| e.or_input(&input))?;
                ctx.gpu.synchronize().map_err(Failure::from)?;
                let trace = ctx.gpu.trace().map_err(Failure::from)?;
                let o = Overlap::of(&trace);
                if o.launches != 4 || o.copies != 4 {
                    return Err(Failure::new(format!(
                        "{} computations and {} communications ran; a chunk pair has four of each",
                        o.launches, o.copies
                    ))
                    .input(&input)
                    .detail(story(&pair, &trace))
                    .concept(
                        "run each of the eight steps once: pair.run(step, stream) for every step of Step::FORWARD and Step::BACKWARD",
                    ));
                }
                if best.as_ref().is_none_or(|(b, _)| o.makespan_us < b.makespan_us) {
                    best = Some((o, trace));
                }
            }
            let (out, grad_in) = pair.results(&ctx.gpu.default_stream()).map_err(Failure::from)?;
            let (want_out, want_grad) = gpubook_labs::chunk_pair::expected(&tokens, &grads);
            check_f32("forward.out", &out, &want_out, Tolerance::F32).map_err(|e| e.input(&input).concept(ORDER))?;
            check_f32("backward.grad_in", &grad_in, &want_grad, Tolerance::F32).map_err(|e| e.input(&input).concept(ORDER))?;
            if n < large {
                continue;
            }
            let (theirs, trace) = best.expect("at least one run");
            let alone = gpubook_labs::chunk_pair::measure(&ctx.gpu, Plan::OneStream, n, config, reps)
                .map_err(|e| Failure::new(format!("the one-stream baseline failed: {e:#}")))?
                .overlap;
            let hidden = theirs.hidden_against(&alone);
            if hidden < HIDDEN_AT_LEAST {
                return Err(Failure::new(format!(
                    "{:.0}% of the communication was hidden; at least {:.0}% should be",
                    100.0 * hidden,
                    100.0 * HIDDEN_AT_LEAST
                ))
                .input(&input)
                .detail(story(&pair, &trace))
                .detail(format!(
                    "your pair took {:.1} µs, {:.1} µs of them with no kernel running; on one stream the copies take {:.1} µs",
                    theirs.makespan_us,
                    theirs.exposed_us(),
                    alone.comm_us
                ))
                .concept(OVERLAP));
            }
        }
        Ok(())
    })
}

/// The pair's steps as they ran, in issue order: stream, start and end, the step.
fn story(pair: &ChunkPair, trace: &Trace) -> String {
    let steps: Vec<_> = trace.ops.iter().filter(|o| is_compute(o) || is_communication(o)).collect();
    let t0 = steps.iter().map(|o| o.start_us).fold(f64::INFINITY, f64::min);
    let mut lines = vec!["what ran, in the order you issued it (µs from the first step's start):".to_string()];
    for o in steps {
        let step = pair.step_of(o).map_or("?".to_string(), |s| s.to_string());
        let what = if is_compute(o) { "computes" } else { "communicates" };
        lines.push(format!("  stream {}  {:>9.1} → {:>9.1}  {step:<12} {what}", o.stream, o.start_us - t0, o.end_us - t0));
    }
    lines.join("\n")
}
