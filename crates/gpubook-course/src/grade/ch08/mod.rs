//! Chapter 8: double buffering. The ping-pong pipeline is graded on its values (what its kernels
//! wrote, as its downloads carried it into the output), on the trace (at least 80% of the copy
//! time hidden behind the pipeline's own work: its kernels and its copies of other chunks, not
//! anything else that happens to run; the host never waiting inside the loop; two pairs of
//! buffers and no more device memory) and, with automatic synchronisation off, on having no
//! hazard: one buffer shared by both streams is a buffer reused before its last user is done.
//! The low-latency exchange is graded by playing simulated ranks through the learner's protocol
//! for 10,000 operations in orders drawn from the seed; every signal read, clean and count is
//! checked as it happens (gpubook/low_latency.cuh).

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{downloaded_from_kernels, uploads_are_inputs};
use super::explain::Explain;
use super::words::count;
use super::{Failure, Tolerance, check_f32, grade};
use gpubook::gpu::digest_of;
use gpubook::gpu::{
    BackendKind, CopyDir, DeviceSlice, Gpu, HostSlice, LaunchConfig, OpKind, PinnedHostSlice, Result, Source, Trace, TraceOp, Writer,
};
use gpubook_labs::overlap::{Hidden, copy_hidden, copy_hidden_by};
use std::collections::HashSet;

/// The share of copy time the ping-pong must hide.
pub const HIDDEN_GOAL: f64 = 0.80;

const PING_PONG: &str = "double buffering: chunk i uses buffer pair i % 2 on stream i % 2, so while one stream \
     computes chunk i the other copies chunk i+1 in (and chunk i-1 out); a pair is reused only by its own stream, \
     after its previous download, by stream order";

/// `ping_pong(gpu, input, output, scale, shift, chunk_rows)`: output = input · scale + shift per
/// channel, chunk by chunk, on two streams.
pub fn ping_pong(f: impl Fn(&Gpu, &PinnedHostSlice<f32>, &mut PinnedHostSlice<f32>, &[f32], &[f32], usize) -> Result<()>) -> GradeReport {
    grade("ch08-ping-pong", |ctx| {
        // Chunks big enough that copying them, not issuing them, takes the time.
        let (hidden, chunk_rows) = (64, if ctx.gpu.backend() == BackendKind::Cuda { 16384 } else { 4096 });
        let (full, partial) = (ctx.rng.usize(9, 16), ctx.rng.usize(1, chunk_rows));
        // One case drawn from the seed in every dimension, too small to time; never 64 wide.
        let (width, seeded_chunk) = (ctx.rng.usize(3, 160), ctx.rng.usize(2, 300));
        let seeded_hidden = if width >= hidden { width + 1 } else { width };
        let seeded_rows = seeded_chunk * ctx.rng.usize(3, 10) + ctx.rng.usize(0, seeded_chunk);
        let cases = [
            (1, hidden, chunk_rows, "one row: a single, partial chunk".to_string(), false),
            (chunk_rows, hidden, chunk_rows, "exactly one chunk".to_string(), false),
            (seeded_rows, seeded_hidden, seeded_chunk, "drawn from the seed".to_string(), false),
            (full * chunk_rows + partial, hidden, chunk_rows, format!("{} and a partial one, from the seed", count(full, "chunk")), true),
        ];
        for (rows, hidden, chunk_rows, name, timed) in cases {
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
            let pipeline = Pipeline {
                input: (input.host_ptr().0 as u64, n * 4),
                output: (output.host_ptr().0 as u64, n * 4),
                chunk_bytes: chunk_rows * hidden * 4,
                param_bytes: 2 * hidden * 4,
            };
            let mut inputs: Vec<(&str, u64)> = x.chunks(chunk_rows * hidden).map(|c| ("input", digest_of(c))).collect();
            inputs.extend([("input", digest_of(&x)), ("scale", digest_of(&scale)), ("shift", digest_of(&shift))]);
            pipeline.uploads_are_inputs(&trace, &inputs).map_err(|e| e.input(&input_name))?;
            downloaded_from_kernels(&trace, "output", pipeline.output.0, &got).map_err(|e| e.input(&input_name))?;
            check_ping_pong_trace(&trace, &pipeline, timed).map_err(|e| e.input(&input_name))?;
        }
        Ok(())
    })
}

/// Pinned input holding `x`, and pinned output of the same length.
fn pinned_pair(gpu: &Gpu, x: &[f32]) -> Result<(PinnedHostSlice<f32>, PinnedHostSlice<f32>)> {
    // SAFETY: filled from x right below, before anything reads it.
    let mut input = unsafe { gpu.alloc_pinned::<f32>(x.len()) }?;
    input.as_mut_slice()?.copy_from_slice(x);
    // SAFETY: filled with poison right below (unwritten rows show), before anything reads it.
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

/// The ping-pong's own memory: the pinned input and output (host address, bytes), the size of
/// a chunk, and the parameters' bytes.
struct Pipeline {
    input: (u64, usize),
    output: (u64, usize),
    chunk_bytes: usize,
    param_bytes: usize,
}

impl Pipeline {
    /// A copy between the device and the pinned range `r`.
    fn copies(dir: CopyDir, r: (u64, usize)) -> impl Fn(&TraceOp) -> bool {
        move |o| {
            matches!(o.kind, OpKind::Copy { dir: d, host: Some(h), bytes, .. }
                if d == dir && h >= r.0 && h + bytes as u64 <= r.0 + r.1 as u64)
        }
    }

    /// Uploads from the pinned input carry input by construction; any other must carry a chunk of
    /// the input, the whole of it, or a parameter.
    fn uploads_are_inputs(&self, t: &Trace, inputs: &[(&str, u64)]) -> Result<(), Failure> {
        let from_input = Self::copies(CopyDir::HostToDevice, self.input);
        let others = Trace { ops: t.ops.iter().filter(|o| !from_input(o)).cloned().collect() };
        uploads_are_inputs(&others, inputs)
    }

    /// The copy time the pipeline hid behind its own work: its downloads into the output, the
    /// kernels that wrote what they carried, and the uploads from the input those kernels read,
    /// beside each other. Work on the side (a kernel on another stream, a copy of something
    /// else, or of the input again) hides nothing.
    fn hidden(&self, t: &Trace) -> Hidden {
        let down = Self::copies(CopyDir::DeviceToHost, self.output);
        let from_input = Self::copies(CopyDir::HostToDevice, self.input);
        let written_by = |buffer, at| match t.last_writer(buffer, at) {
            Writer::Launch(op) | Writer::Upload(op) => Some(op),
            _ => None,
        };
        let mut kernels = HashSet::new();
        for o in t.ops.iter().filter(|o| down(o)) {
            if let OpKind::Copy { src: Some(b), .. } = o.kind
                && let Some(k) = written_by(b, o.index).filter(|k| k.kind.is_launch())
            {
                kernels.insert(k.index);
            }
        }
        let mut uploads = HashSet::new();
        for &k in &kernels {
            let OpKind::Launch { buffers, .. } = &t.ops[k].kind else { continue };
            for &(b, _) in buffers.iter().filter(|b| !b.1) {
                if let Some(up) = written_by(b, k).filter(|up| from_input(up)) {
                    uploads.insert(up.index);
                }
            }
        }
        copy_hidden_by(t, |o| uploads.contains(&o.index), down, |o| kernels.contains(&o.index))
    }
}

/// What the trace must show: two pairs of chunk buffers and no more device memory, no host
/// waits inside the loop, and (for the timed case) most of the copy time overlapped by the
/// pipeline's own work.
fn check_ping_pong_trace(t: &Trace, p: &Pipeline, timed: bool) -> Result<(), Failure> {
    const TWO_PAIRS: &str = "double buffering needs two pairs of chunk buffers (x and y for each stream), reused chunk \
         after chunk: one buffer per chunk (or one for all the data) hides the reuse problem, and a real dataset would \
         not fit";
    let chunk_buffers = t.ops.iter().filter(|o| matches!(o.kind, OpKind::Alloc { bytes, .. } if bytes == p.chunk_bytes)).count();
    if chunk_buffers > 4 {
        return Err(Failure::new(format!("{chunk_buffers} chunk-sized device buffers were allocated")).concept(TWO_PAIRS));
    }
    let allocated: usize = t.ops.iter().map(|o| if let OpKind::Alloc { bytes, .. } = o.kind { bytes } else { 0 }).sum();
    if allocated > 4 * p.chunk_bytes + p.param_bytes {
        let chunks = allocated.saturating_sub(p.param_bytes) as f64 / p.chunk_bytes as f64;
        return Err(Failure::new(format!(
            "{allocated} bytes of device memory were allocated: {chunks:.1} chunks' worth besides the parameters, where two \
             pairs of chunk buffers are 4"
        ))
        .concept(TWO_PAIRS));
    }
    let pinned_copy = |o: &gpubook::gpu::TraceOp| matches!(o.kind, OpKind::Copy { pinned: true, .. });
    let first = t.ops.iter().position(pinned_copy);
    let last = t.ops.iter().rposition(|o| matches!(o.kind, OpKind::Copy { dir: CopyDir::DeviceToHost, .. }));
    if let (Some(first), Some(last)) = (first, last)
        && let Some(op) = t.ops[first..last]
            .iter()
            .find(|o| matches!(o.kind, OpKind::SynchronizeStream | OpKind::SynchronizeDevice | OpKind::SynchronizeEvent))
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
        let h = p.hidden(t);
        if h.fraction() < HIDDEN_GOAL {
            let mut failure = Failure::new(format!(
                "only {:.0}% of the copy time overlapped the pipeline's other work ({:.0} of {:.0} µs); the goal is {:.0}%",
                100.0 * h.fraction(),
                h.hidden_us,
                h.copy_us,
                100.0 * HIDDEN_GOAL
            ))
            .concept(PING_PONG)
            .detail(streams_summary(t));
            let anything = copy_hidden(t);
            if anything.fraction() >= HIDDEN_GOAL {
                failure = failure.detail(format!(
                    "{:.0}% of the copy time ran beside some other work, but only the pipeline's own count: its kernels \
                     whose results came back, and its copies of other chunks the other way",
                    100.0 * anything.fraction()
                ));
            }
            return Err(failure);
        }
    }
    Ok(())
}

/// Which streams the copies and kernels ran on, for a failure's evidence.
fn streams_summary(t: &Trace) -> String {
    let pipeline = |o: &&gpubook::gpu::TraceOp| matches!(o.kind, OpKind::Copy { pinned: true, .. } | OpKind::Launch { .. });
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
pub fn ll_buffers(source: impl Fn() -> Source) -> GradeReport {
    grade("ch08-ll-buffers", |ctx| {
        let module = ctx.call(|| ctx.gpu.load_module(source()))?;
        let run = module.load_function("ll_run").map_err(Failure::from)?;
        let s = ctx.gpu.default_stream();
        let per_buffer = LL_RANKS + LL_RANKS * LL_TOKENS * LL_HIDDEN;
        let mut state = vec![0i32; LL_RANKS * LL_STATE_INTS + 4];
        let seed = (ctx.seed as u32) | 1;
        state[LL_RANKS * LL_STATE_INTS] = seed as i32; // the scheduler's random state
        // The stamp only SEND phases see (gpubook/low_latency.cuh): never zero, never the seed.
        state[LL_RANKS * LL_STATE_INTS + 3] = ((ctx.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as u32 | 1) as i32;
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
                    // SAFETY: the stage's buffers are sized as gpubook/low_latency.cuh lays them out for
                    // LL_RANKS × LL_TOKENS × LL_HIDDEN; where the learner's ll_* functions store is what
                    // the emulator's check mode checks (on a GPU they are trusted).
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
    })
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
        6 if value == -2 => Failure::new(format!(
            "in operation {op}, rank {rank}'s ll_recv returned true without storing the count from rank {peer} in \
             c.out_counts[{peer}]"
        ))
        .concept("when every count has arrived, ll_recv stores each decoded count n = -v - 1 in c.out_counts[source]"),
        6 => Failure::new(format!(
            "in operation {op}, rank {rank} received a count of {} from rank {peer}; {other} {} sent",
            count(value as usize, "token"),
            if other == 1 { "was" } else { "were" }
        ))
        .concept(
            "a receiver learns each count from the signal word in its own buffer: decode the signal v as n = -v - 1 \
             (and send n as -n-1)",
        ),
        7 if value == -2 => Failure::new(format!(
            "in operation {op}, rank {rank}'s ll_recv returned true without copying token {} word {} from rank {peer} \
             into c.out",
            r[7], r[8]
        ))
        .concept(
            "ll_recv copies every token that arrived, each time it returns true: c.out[(source * c.tokens + i) * \
             c.hidden + j] = ll_slot(c, buffer, source, i)[j]",
        ),
        7 if value >= 0 && other >= 0 && (value ^ other) & !CHECK_BITS == 0 => Failure::new(format!(
            "in operation {op}, rank {rank} returned token {} word {} from rank {peer} as it would be sent, but not as \
             rank {peer} sent it: the receiver rebuilt it instead of reading it from its buffer",
            r[7], r[8]
        ))
        .concept(RECEIVE_FROM_THE_BUFFER),
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
        11 => Failure::new(format!(
            "in operation {op}, rank {rank} returned token {} word {} from rank {peer} correctly, but its buffer holds {value} \
             ({}) there: the token did not come through the buffer",
            r[7],
            r[8],
            describe_word(value)
        ))
        .concept(RECEIVE_FROM_THE_BUFFER),
        12 => Failure::new(format!(
            "in operation {op}, rank {rank}'s ll_recv called {}, which says what rank {rank} sends, not what it received",
            if other == 0 { "ll_count" } else { "ll_word" }
        ))
        .concept(RECEIVE_FROM_THE_BUFFER),
        k => Failure::new(format!("the harness reported an unknown violation {k}")),
    };
    f.input(format!("{LL_RANKS} ranks, {LL_OPS} operations each, interleaved at random (the seed below replays it)"))
}

/// What a receiver must do, as the reports of a receiver that did not put it.
const RECEIVE_FROM_THE_BUFFER: &str = "a receiver learns what arrived from its own buffer and nowhere else: the count from \
     the signal word (n = -v - 1), the tokens from ll_slot(c, ll_buffer(c, c.rank, cur), source, i); ll_count and ll_word \
     say what this rank sends, and only SEND may call them";

/// The bits of a token word that check it against the stamp of its operation (ll_word_stamped).
const CHECK_BITS: i32 = 0xF << 27;

/// A token word says which operation, sender, receiver, token and word it is (ll_word_stamped).
fn describe_word(w: i32) -> String {
    if w < 0 {
        return "not a token word".into();
    }
    let w = w as u32;
    format!("op {}, from {} to {}, token {} word {}", (w >> 13) & 0x3FFF, (w >> 10) & 7, (w >> 7) & 7, (w >> 3) & 15, w & 7)
}
