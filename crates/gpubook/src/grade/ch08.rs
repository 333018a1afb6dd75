//! Chapter 8: double buffering. The ping-pong pipeline is graded on its values, on the trace
//! (at least 80% of the copy time hidden behind other engines' work, the host never waiting
//! inside the loop, two pairs of buffers) and, with automatic synchronisation off, on having no
//! hazard: one buffer shared by both streams is a buffer reused before its last user is done.
//! The low-latency exchange is graded by playing simulated ranks through the learner's protocol
//! for 10,000 operations in orders drawn from the seed; every signal read, clean and count is
//! checked as it happens (gpubook/low_latency.cuh).

use super::explain::Explain;
use super::words::count;
use super::{Failure, Tolerance, check_f32, grade};
use crate::gpu::{BackendKind, CopyDir, DeviceSlice, Gpu, LaunchConfig, OpKind, PinnedHostSlice, Result, Source, Trace};
use crate::labs::overlap::copy_hidden;

/// The share of copy time the ping-pong must hide.
pub const HIDDEN_GOAL: f64 = 0.80;

const PING_PONG: &str = "double buffering: chunk i uses buffer pair i % 2 on stream i % 2, so while one stream \
     computes chunk i the other copies chunk i+1 in (and chunk i-1 out); a pair is reused only by its own stream, \
     after its previous download, by stream order";

/// `ping_pong(gpu, input, output, scale, shift, chunk_rows)`: output = input · scale + shift per
/// channel, chunk by chunk, on two streams.
pub fn ping_pong(f: impl Fn(&Gpu, &PinnedHostSlice<f32>, &mut PinnedHostSlice<f32>, &[f32], &[f32], usize) -> Result<()>) {
    grade("ch08-ping-pong", |ctx| {
        let hidden = 64;
        // Chunks big enough that copying them, not issuing them, takes the time.
        let chunk_rows = if ctx.gpu.backend() == BackendKind::Cuda { 16384 } else { 4096 };
        let cases = [
            (1, "one row: a single, partial chunk", false),
            (chunk_rows, "exactly one chunk", false),
            (12 * chunk_rows + 37, "twelve chunks and a partial one", true),
        ];
        for (rows, name, timed) in cases {
            let input_name =
                format!("{} of {}, chunks of {} ({name})", count(rows, "row"), count(hidden, "channel"), count(chunk_rows, "row"));
            let n = rows * hidden;
            let x = ctx.rng.vec_f32(n, -4.0, 4.0);
            let scale = ctx.rng.vec_f32(hidden, 0.5, 1.5);
            let shift = ctx.rng.vec_f32(hidden, -1.0, 1.0);
            let (input, mut output) = pinned_pair(&ctx.gpu, &x).map_err(Failure::from)?;
            ctx.gpu.set_auto_sync(false);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            ctx.call(|| f(&ctx.gpu, &input, &mut output, &scale, &shift, chunk_rows))
                .map_err(|e| hazard_concept(e).or_input(&input_name))?;
            if ctx.gpu.auto_sync() {
                return Err(Failure::new("automatic synchronisation was switched back on")
                    .concept("order the streams yourself: leave gpu.set_auto_sync(false) as it is")
                    .input(&input_name));
            }
            let got = output.as_slice().map_err(Failure::from)?.to_vec();
            let want: Vec<f64> =
                x.iter().enumerate().map(|(i, &v)| v as f64 * scale[i % hidden] as f64 + shift[i % hidden] as f64).collect();
            check_f32("output", &got, &want, Tolerance::F32).map_err(|e| e.input(&input_name).concept(PING_PONG))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            check_ping_pong_trace(&trace, chunk_rows * hidden * 4, timed).map_err(|e| e.input(&input_name))?;
        }
        Ok(())
    });
}

/// Pinned input holding `x`, and pinned output of the same length.
fn pinned_pair(gpu: &Gpu, x: &[f32]) -> Result<(PinnedHostSlice<f32>, PinnedHostSlice<f32>)> {
    // SAFETY: the input is written here; the output by the exercise before the grader reads it.
    let mut input = unsafe { gpu.alloc_pinned::<f32>(x.len()) }?;
    input.as_mut_slice()?.copy_from_slice(x);
    let mut output = unsafe { gpu.alloc_pinned::<f32>(x.len()) }?;
    output.as_mut_slice()?.fill(f32::from_bits(u32::MAX)); // poison: unwritten rows show
    Ok((input, output))
}

fn hazard_concept(f: Failure) -> Failure {
    if f.details.iter().any(|d| d.starts_with("cross-stream hazard")) {
        return f.concept(
            "with automatic synchronisation off, a buffer touched by two streams needs an event between the two uses: \
             the kernels read `scale` and `shift`, which the default stream uploaded (record an event after the upload, \
             make each stream wait on it); and a chunk buffer shared by both streams would be overwritten by one \
             while the other still uses it: give each stream its own pair",
        );
    }
    f
}

/// What the trace must show: two pairs of chunk buffers, no host waits inside the loop, and
/// (for the timed case) most of the copy time overlapped by other engines' work.
fn check_ping_pong_trace(t: &Trace, chunk_bytes: usize, timed: bool) -> Result<(), Failure> {
    let chunk_buffers = t.ops.iter().filter(|o| matches!(o.kind, OpKind::Alloc { bytes, .. } if bytes == chunk_bytes)).count();
    if chunk_buffers > 4 {
        return Err(Failure::new(format!("{chunk_buffers} chunk-sized device buffers were allocated")).concept(
            "double buffering needs two pairs of chunk buffers (x and y for each stream), reused chunk after chunk: one \
             buffer per chunk hides the reuse problem, and a real dataset would not fit",
        ));
    }
    let pinned_copy = |o: &crate::gpu::TraceOp| matches!(o.kind, OpKind::Copy { pinned: true, .. });
    let first = t.ops.iter().position(pinned_copy);
    let last = t.ops.iter().rposition(|o| matches!(o.kind, OpKind::Copy { dir: CopyDir::DeviceToHost, .. }));
    if let (Some(first), Some(last)) = (first, last)
        && let Some(op) = t.ops[first..last].iter().find(|o| matches!(o.kind, OpKind::SynchronizeStream | OpKind::SynchronizeDevice))
    {
        return Err(Failure::new(format!("the host waited for the device (`{}`) inside the pipeline", op.kind.short())).concept(
            "the host only issues work in the loop; a host wait there drains the streams and stops the overlap \
             (copies from and into pinned memory are asynchronous, so nothing needs it)",
        ));
    }
    if !t.ops.iter().any(|o| matches!(o.kind, OpKind::Copy { pinned: true, .. })) {
        return Err(Failure::new("no copy used pinned host memory").concept(
            "copy from and into the pinned buffers you were given (input.slice(..), output.slice_mut(..)): a copy from \
             pageable memory is staged by the driver and cannot overlap anything",
        ));
    }
    if timed {
        let h = copy_hidden(t);
        if h.fraction() < HIDDEN_GOAL {
            return Err(Failure::new(format!(
                "only {:.0}% of the copy time overlapped other work ({:.0} of {:.0} µs); the goal is {:.0}%",
                100.0 * h.fraction(),
                h.hidden_us,
                h.copy_us,
                100.0 * HIDDEN_GOAL
            ))
            .concept(PING_PONG)
            .detail(streams_summary(t)));
        }
    }
    Ok(())
}

/// Which streams the copies and kernels ran on, for a failure's evidence.
fn streams_summary(t: &Trace) -> String {
    let pipeline = |o: &&crate::gpu::TraceOp| matches!(o.kind, OpKind::Copy { pinned: true, .. } | OpKind::Launch { .. });
    let mut streams: Vec<u32> = t.ops.iter().filter(pipeline).map(|o| o.stream).collect();
    streams.sort();
    streams.dedup();
    format!(
        "copies and kernels ran on {} stream{} ({:?}); the timeline: `gpubook::viz::timeline_svg(&gpu.trace()?, ..)`",
        streams.len(),
        if streams.len() == 1 { "" } else { "s" },
        streams
    )
}

// ---- The low-latency exchange ----------------------------------------------------------------

/// Operations every rank goes through, and per launch of the harness.
pub const LL_OPS: usize = 10_000;
const LL_OPS_PER_LAUNCH: usize = 1_000;
/// The stage's shape: ranks, at most this many tokens per (sender, receiver) and operation, ints
/// per token (see gpubook/low_latency.cuh).
const LL_RANKS: usize = 4;
const LL_TOKENS: usize = 3;
const LL_HIDDEN: usize = 4;
const LL_THREADS: u32 = 64;
const LL_STATE_INTS: usize = 8;
const LL_SHADOW_INTS: usize = 4;
const LL_REPORT_INTS: usize = 24;

/// Device memory the harness works in.
struct Stage {
    region: DeviceSlice<i32>,
    shadow: DeviceSlice<i32>,
    state: DeviceSlice<i32>,
    out: DeviceSlice<i32>,
    report: DeviceSlice<i32>,
}

/// `ll_buffers() -> Source`: the kernel file with `ll_flip`, `ll_send`, `ll_recv`.
pub fn ll_buffers(source: impl Fn() -> Source) {
    grade("ch08-ll-buffers", |ctx| {
        let module = ctx.call(|| ctx.gpu.load_module(source()))?;
        let run = module.load_function("ll_run").map_err(Failure::from)?;
        let s = ctx.gpu.default_stream();
        let per_buffer = LL_RANKS + LL_RANKS * LL_TOKENS * LL_HIDDEN;
        let mut state = vec![0i32; LL_RANKS * LL_STATE_INTS + 3];
        let seed = (ctx.seed as u32) | 1;
        state[LL_RANKS * LL_STATE_INTS] = seed as i32; // the scheduler's random state
        let mut region = s.alloc_zeros::<i32>(LL_RANKS * 2 * per_buffer).map_err(Failure::from)?;
        region.set_label("region");
        let mut stage = Stage {
            region,
            shadow: s.alloc_zeros::<i32>(LL_RANKS * 2 * LL_RANKS * LL_SHADOW_INTS).map_err(Failure::from)?,
            state: s.clone_htod(&state).map_err(Failure::from)?,
            out: s.alloc_zeros::<i32>(LL_RANKS * LL_RANKS * LL_TOKENS * LL_HIDDEN + LL_RANKS * LL_RANKS).map_err(Failure::from)?,
            report: s.alloc_zeros::<i32>(LL_REPORT_INTS).map_err(Failure::from)?,
        };
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (LL_THREADS, 1, 1), shared_mem_bytes: 0 };
        let (ranks, tokens, hidden) = (LL_RANKS as i32, LL_TOKENS as i32, LL_HIDDEN as i32);
        let mut report = vec![0i32; LL_REPORT_INTS];
        for target in (LL_OPS_PER_LAUNCH..=LL_OPS).step_by(LL_OPS_PER_LAUNCH) {
            let target_i = target as i32;
            let ran = ctx.call(|| {
                Ok((|| {
                    let st = &mut stage;
                    let mut l = s.launch_builder(&run);
                    l.arg(&mut st.region).arg(&mut st.shadow).arg(&mut st.state).arg(&mut st.out).arg(&mut st.report);
                    l.arg(&ranks).arg(&tokens).arg(&hidden).arg(&target_i).arg(&seed);
                    unsafe { l.launch(cfg) }?;
                    s.clone_dtoh(&st.report)
                })())
            })?;
            report = ran.map_err(|e| {
                let concept = LL_EXPLAIN.concept_for(&e).unwrap_or(LL_PROTOCOL).to_string();
                Failure::from(e).concept(concept)
            })?;
            if report[0] != 0 {
                return Err(ll_failure(&report));
            }
        }
        // report[18]: the widest gap seen between the fastest and the slowest rank.
        if report[18] < 1 {
            return Err(Failure::new("the ranks never got out of step, so the test proved nothing")
                .concept("(a grader bug: the harness should let ranks run ahead of each other)"));
        }
        Ok(())
    });
}

/// What the emulator's findings most likely mean in this exercise.
const LL_EXPLAIN: Explain<'static> = Explain {
    race: Some(
        "two threads wrote the same word in one phase (or one wrote what another read): let one thread \
         (threadIdx.x == 0) write each count and each c.out_counts entry, split the token words between the \
         threads, and keep the __syncthreads between the tokens and the counts in ll_send",
    ),
    out_of_bounds: Some(
        "an index past a buffer: buffers are ll_buffer(c, rank, 0 or 1); token i from src is c.hidden ints at \
         ll_slot(c, buffer, src, i), for i < its count; c.out is [ranks][tokens][hidden] and c.out_counts [ranks]",
    ),
    divergence: Some("every thread of the block must reach the __syncthreads in ll_send: guard the work, not the barrier"),
    uninitialized: None,
    launch_config: None,
};

const LL_PROTOCOL: &str = "two buffers per rank, alternating every operation (buffer = buffers[idx]; next = \
     buffers[idx ^= 1]); during operation i, one warp zeroes the NEXT buffer's signals while the others send; counts \
     go out as -n-1, after the cleaning and the tokens, so 0 always means \"not arrived yet\"";

/// The harness's first violation, in words (the codes are gpubook/low_latency.cuh's).
fn ll_failure(r: &[i32]) -> Failure {
    let (rank, op, peer, other, value, buf) = (r[1], r[2], r[3], r[4], r[5], r[6]);
    let f = match r[0] {
        1 => Failure::new(format!(
            "ll_flip gave buffer indices *cur = {value}, *next = {other} for rank {rank}'s operation {op}; both must be 0 or 1"
        ))
        .concept("*cur = *idx (this operation's buffer), then flip *idx ^= 1, then *next = *idx"),
        2 => Failure::new(format!(
            "rank {rank} sent rank {peer} a count written as 0 in operation {op}: to the receiver, 0 means \"nothing has arrived yet\""
        ))
        .concept("send a count of n tokens as -n-1: then 0 tokens is -1, and 0 stays free to mean \"not arrived\""),
        3 => Failure::new(format!(
            "stale read: in operation {op}, rank {rank} read the count rank {peer} had sent in operation {other} \
             (value {value}, buffer {buf}): left over, not this operation's"
        ))
        .concept(
            "a buffer's signals must be zeroed before the buffer is used again; with two buffers, operation i zeroes the \
             signals of buffer (i+1) % 2, which operation i-1 used and operation i+1 will use",
        ),
        4 => Failure::new(format!(
            "in operation {op}, rank {rank}'s cleaning zeroed the count rank {peer} had just sent it (in operation {other}, \
             buffer {buf}) before it was read: that count is lost and its receiver would wait forever"
        ))
        .concept(
            "clean only the NEXT buffer's signals, never the one this operation reads: a faster peer may already have \
             sent this operation's count. With a single buffer there is no safe moment to clean: this is why there \
             are two",
        ),
        5 => Failure::new(format!(
            "in operation {op}, rank {rank}'s count landed on rank {peer}'s signal (buffer {buf}) while the count from \
             operation {other} there was still unread: a buffer was reused before its last reader was done with it"
        ))
        .concept(
            "alternate two buffers: a peer can be one operation ahead of you, never two, so its next operation writes \
             into the other buffer while you still read this one",
        ),
        6 => Failure::new(format!(
            "in operation {op}, rank {rank} received a count of {} from rank {peer}; {other} {} sent",
            count(value as usize, "token"),
            if other == 1 { "was" } else { "were" }
        ))
        .concept("decode the signal v as n = -v - 1 (and send n as -n-1)"),
        7 => Failure::new(format!(
            "in operation {op}, rank {rank} received token {} word {} from rank {peer} as {value} ({}); expected {other} ({})",
            r[7],
            r[8],
            describe_word(value),
            describe_word(other)
        ))
        .concept(
            "read the tokens only after the count has arrived, from this operation's buffer, at ll_slot(c, buffer, \
             source, i); write them where ll_recv's caller looks: c.out[(source * c.tokens + i) * c.hidden + j]",
        ),
        8 if rank < 0 => Failure::new(
            "deadlock: every rank waits in ll_recv, yet every count in the buffers they read has arrived: does ll_recv \
             read the buffer `cur` it is given?",
        )
        .concept(LL_PROTOCOL),
        8 => {
            let (last_write, writer) = (r[7], r[8]);
            let what = if value == 0 {
                format!("rank {peer} has not sent it yet and cannot: it is stuck too")
            } else if last_write == op && writer == peer + 1 && other >= last_write {
                format!("rank {peer} sent it, and a cleaning in operation {other} zeroed it before it was read")
            } else {
                format!("rank {peer} has done its send for operation {op}, but its count never arrived in buffer {buf}")
            };
            Failure::new(format!("deadlock: in operation {op}, rank {rank} waits for rank {peer}'s count in buffer {buf}; {what}"))
                .concept(LL_PROTOCOL)
        }
        9 => Failure::new(format!(
            "rank {rank} (operation {op}) passed ll_put_count / ll_get_count / ll_clean a pointer that is not a signal word"
        ))
        .concept("signal words are ll_buffer(c, rank, idx).signals[source]; the tokens live in .recv"),
        10 => Failure::new(format!(
            "rank {rank} wrote its count into rank {peer}'s signal slot {other} (operation {op}); each sender has its own slot"
        ))
        .concept("rank r announces its tokens in signals[r] of the receiver's buffer: ll_buffer(c, peer, cur).signals[c.rank]"),
        k => Failure::new(format!("the harness reported an unknown violation {k}")),
    };
    f.input(format!("{LL_RANKS} ranks, {LL_OPS} operations each, interleaved at random (the seed below replays it)"))
}

/// A token word says which operation, sender, receiver, token and word it is (ll_word_of).
fn describe_word(w: i32) -> String {
    if w < 0 {
        return "not a token word".into();
    }
    let w = w as u32;
    format!("op {}, from {} to {}, token {} word {}", w >> 13, (w >> 10) & 7, (w >> 7) & 7, (w >> 3) & 15, w & 7)
}
