//! Chapter 8's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::testing::{KERNEL_DOES_THE_WORK, cfg_1d, expect_failure, mutant, solution_kernel, with_kernel, workspace_kernel};
use crate::grade::{GradeReport, ch08};
use gpubook::gpu::{Function, Gpu, PinnedHostSlice, Result, Source, Stream};

#[derive(Clone, Copy, PartialEq)]
enum PingPong {
    /// Both streams share one pair of buffers.
    OnePair,
    /// Two pairs, but everything on one stream.
    OneStream,
    /// The streams do not wait for the parameters' upload.
    NoSetupEvent,
}

type PingPongFn = dyn Fn(&Gpu, &PinnedHostSlice<f32>, &mut PinnedHostSlice<f32>, &[f32], &[f32], usize) -> Result<()>;

fn ping_pong_wrong(how: PingPong) -> Box<PingPongFn> {
    Box::new(move |gpu, input, output, scale, shift, chunk_rows| {
        let hidden = scale.len();
        let f = gpu.load_module(workspace_kernel("solutions/kernels/ch08/channel_affine.cu"))?.load_function("channel_affine")?;
        let setup = gpu.default_stream();
        let mut scale_d = setup.clone_htod(scale)?;
        scale_d.set_label("scale");
        let shift_d = setup.clone_htod(shift)?;
        let (n, chunk) = (input.len(), chunk_rows * hidden);
        let streams = match how {
            PingPong::OneStream => vec![gpu.new_stream()?],
            _ => vec![gpu.new_stream()?, gpu.new_stream()?],
        };
        let ready = setup.record_event()?;
        if how != PingPong::NoSetupEvent {
            for s in &streams {
                s.wait(&ready)?;
            }
        }
        let pairs_wanted = if how == PingPong::OnePair { 1 } else { 2 };
        let mut pairs = Vec::new();
        for p in 0..pairs_wanted {
            let owner = &streams[p % streams.len()];
            // SAFETY: a chunk's upload fills x[..len] before the kernel reads it, and the kernel y[..len]
            // before the download (OnePair's race, on purpose, mixes values, not addresses).
            let (mut x, y) = unsafe { (owner.alloc::<f32>(chunk)?, owner.alloc::<f32>(chunk)?) };
            x.set_label(format!("x[{p}]"));
            pairs.push((x, y));
        }
        for (i, start) in (0..n).step_by(chunk).enumerate() {
            let len = chunk.min(n - start);
            let s = &streams[i % streams.len()];
            let (x, y) = &mut pairs[i % pairs_wanted];
            s.memcpy_htod(&input.slice(start..start + len), &mut x.slice_mut(..len))?;
            {
                let (xv, mut yv) = (x.slice(..len), y.slice_mut(..len));
                let (len_i, h) = (len as i32, hidden as i32);
                let mut l = s.launch_builder(&f);
                l.arg(&xv).arg(&mut yv).arg(&scale_d).arg(&shift_d).arg(&len_i).arg(&h);
                // SAFETY: xv and yv are len-float views and channel_affine's i < len guard keeps every
                // thread inside them; c = i % hidden stays inside scale_d and shift_d (NoSetupEvent may
                // read them before their upload lands: values, not addresses).
                unsafe { l.launch(cfg_1d(len)) }?;
            }
            s.memcpy_dtoh(&y.slice(..len), &mut output.slice_mut(start..start + len))?;
        }
        for s in &streams {
            setup.join(s)?;
        }
        Ok(())
    })
}

#[test]
fn ping_pong_with_one_pair_of_buffers() {
    expect_failure(
        "ping_pong_with_one_pair_of_buffers",
        &["cross-stream hazard", "buffer `x[0]`", "give each stream its own pair"],
        || ch08::ping_pong(ping_pong_wrong(PingPong::OnePair)),
    );
}

#[test]
fn ping_pong_on_one_stream() {
    expect_failure("ping_pong_on_one_stream", &["of the copy time overlapped the pipeline's other work", "double buffering"], || {
        ch08::ping_pong(ping_pong_wrong(PingPong::OneStream))
    });
}

#[test]
fn ping_pong_without_the_setup_event() {
    expect_failure("ping_pong_without_the_setup_event", &["reads buffer `scale`", "memcpy_htod", "on stream 0"], || {
        ch08::ping_pong(ping_pong_wrong(PingPong::NoSetupEvent))
    });
}

/// The solution's kernel with `edits`: each wrong answer is a small mutation of it.
fn ll(edits: &[(&str, &str)]) -> impl Fn() -> Source {
    let text = mutant("ch08/ll_buffers.cu", edits);
    move || Source::text("ll_buffers.cu", text.clone())
}

/// One buffer: ll_flip never flips, so the "next" buffer a rank cleans is the one its peers are
/// writing this operation's counts into.
#[test]
fn ll_buffers_with_a_single_buffer() {
    expect_failure("ll_buffers_with_a_single_buffer", &["With a single buffer there is no safe moment to clean"], || {
        ch08::ll_buffers(ll(&[("*idx ^= 1;", "")]))
    });
}

/// Two buffers, but nobody zeroes the next one's signals: the counts of two operations ago are
/// still there when it comes back.
#[test]
fn ll_buffers_without_cleaning() {
    let no_clean = [("for (int s = threadIdx.x; s < c.ranks; s += 32) ll_clean(c, &mine.signals[s]);", "(void)mine;")];
    expect_failure("ll_buffers_without_cleaning", &["stale read", "must be zeroed before the buffer is used again"], || {
        ch08::ll_buffers(ll(&no_clean))
    });
}

/// The count goes out as n, not -n-1, and is read back as such: a count of zero is then
/// indistinguishable from "not arrived".
#[test]
fn ll_buffers_with_plain_counts() {
    let plain = [
        ("signals[c.rank], -ll_count(c, peer) - 1);", "signals[c.rank], ll_count(c, peer));"),
        ("int n = -ll_get_count(c, &mine.signals[s]) - 1;", "int n = ll_get_count(c, &mine.signals[s]);"),
    ];
    expect_failure("ll_buffers_with_plain_counts", &["a count written as 0", "-n-1"], || ch08::ll_buffers(ll(&plain)));
}

fn affine_on_the_host(input: &PinnedHostSlice<f32>, scale: &[f32], shift: &[f32]) -> Result<Vec<f32>> {
    let h = scale.len();
    Ok(input.as_slice()?.iter().enumerate().map(|(i, v)| v * scale[i % h] + shift[i % h]).collect())
}

/// The solution's pipeline around a kernel that stores nothing, then the host writes the output.
#[test]
fn ping_pong_finished_on_the_host() {
    let idle = mutant("ch08/channel_affine.cu", &[("y[i] = x[i] * scale[c] + shift[c];", "(void)c;")]);
    expect_failure(
        "ping_pong_finished_on_the_host",
        &["is not what the device→host copy into it carried", "changed on the host", KERNEL_DOES_THE_WORK],
        || {
            ch08::ping_pong(|gpu, input, output, scale, shift, chunk_rows| {
                with_kernel(gpu, "ch08/channel_affine.cu", idle.clone(), || {
                    solutions::ch08::ping_pong(gpu, input, output, scale, shift, chunk_rows)
                })?;
                let want = affine_on_the_host(input, scale, shift)?;
                output.as_mut_slice()?.copy_from_slice(&want);
                Ok(())
            })
        },
    );
}

#[test]
fn ping_pong_without_the_device() {
    expect_failure("ping_pong_without_the_device", &["no device→host copy wrote `output`", KERNEL_DOES_THE_WORK], || {
        ch08::ping_pong(|_gpu, input, output, scale, shift, _chunk_rows| {
            let want = affine_on_the_host(input, scale, shift)?;
            output.as_mut_slice()?.copy_from_slice(&want);
            Ok(())
        })
    });
}

/// The host computes the output and streams it through the solution's pipeline with scale 1 and
/// shift 0.
#[test]
fn ping_pong_uploading_the_answer() {
    expect_failure("ping_pong_uploading_the_answer", &["none of the inputs (input, scale, shift)", KERNEL_DOES_THE_WORK], || {
        ch08::ping_pong(|gpu, input, output, scale, shift, chunk_rows| {
            let want = affine_on_the_host(input, scale, shift)?;
            // SAFETY: filled from want right below, before the pipeline reads it.
            let mut answer = unsafe { gpu.alloc_pinned::<f32>(want.len()) }?;
            answer.as_mut_slice()?.copy_from_slice(&want);
            let (ones, zeros) = (vec![1.0; scale.len()], vec![0.0; scale.len()]);
            solutions::ch08::ping_pong(gpu, &answer, output, &ones, &zeros, chunk_rows)
        })
    });
}

/// What a wrong ping-pong sets up: the kernel, the parameters on the device (uploaded on the
/// default stream), and `streams` streams that wait for them.
struct Setup {
    f: Function,
    scale: gpubook::gpu::DeviceSlice<f32>,
    shift: gpubook::gpu::DeviceSlice<f32>,
    streams: Vec<std::sync::Arc<Stream>>,
    hidden: usize,
}

impl Setup {
    fn new(gpu: &Gpu, scale: &[f32], shift: &[f32], streams: usize) -> Result<Setup> {
        let f = solution_kernel(gpu, "ch08/channel_affine.cu", "channel_affine")?;
        let s0 = gpu.default_stream();
        let (scale_d, shift_d) = (s0.clone_htod(scale)?, s0.clone_htod(shift)?);
        let ready = s0.record_event()?;
        let streams = (0..streams).map(|_| gpu.new_stream()).collect::<Result<Vec<_>>>()?;
        for s in &streams {
            s.wait(&ready)?;
        }
        Ok(Setup { f, scale: scale_d, shift: shift_d, streams, hidden: scale.len() })
    }

    /// channel_affine over x into y, on stream `s`.
    fn affine(&self, s: usize, x: &gpubook::gpu::DeviceView<'_, f32>, y: &mut gpubook::gpu::DeviceViewMut<'_, f32>) -> Result<()> {
        self.affine_first(s, x, y, x.len())
    }

    /// channel_affine over the first `n` elements of x into y, on stream `s`.
    fn affine_first(
        &self,
        s: usize,
        x: &gpubook::gpu::DeviceView<'_, f32>,
        y: &mut gpubook::gpu::DeviceViewMut<'_, f32>,
        n: usize,
    ) -> Result<()> {
        let (n_i, h) = (n as i32, self.hidden as i32);
        let mut l = self.streams[s].launch_builder(&self.f);
        l.arg(x).arg(y).arg(&self.scale).arg(&self.shift).arg(&n_i).arg(&h);
        // SAFETY: both views hold at least n floats (affine: x's length, y as long; the decoys: 1);
        // channel_affine's i < n guard keeps threads inside, and c = i % hidden inside scale and shift.
        unsafe { l.launch(cfg_1d(n)) }
    }

    fn finish(&self, gpu: &Gpu) -> Result<()> {
        for s in &self.streams {
            gpu.default_stream().join(s)?;
        }
        Ok(())
    }
}

/// Two streams, each with an x and a y as large as the whole input: chunk i uses its own range
/// of stream i % 2's buffers, so no buffer is ever reused (and none needs to be waited for).
fn ping_pong_with_whole_buffers(
    gpu: &Gpu,
    input: &PinnedHostSlice<f32>,
    output: &mut PinnedHostSlice<f32>,
    scale: &[f32],
    shift: &[f32],
    chunk_rows: usize,
) -> Result<()> {
    let p = Setup::new(gpu, scale, shift, 2)?;
    let (n, chunk) = (input.len(), chunk_rows * scale.len());
    let mut pairs = Vec::new();
    for s in &p.streams {
        // SAFETY: on each stream, chunk i's upload fills its range of x before the kernel reads it, and the
        // kernel that range of y before the download.
        pairs.push(unsafe { (s.alloc::<f32>(n)?, s.alloc::<f32>(n)?) });
    }
    for (i, start) in (0..n).step_by(chunk).enumerate() {
        let r = start..(start + chunk).min(n);
        let (x, y) = &mut pairs[i % 2];
        p.streams[i % 2].memcpy_htod(&input.slice(r.clone()), &mut x.slice_mut(r.clone()))?;
        p.affine(i % 2, &x.slice(r.clone()), &mut y.slice_mut(r.clone()))?;
        p.streams[i % 2].memcpy_dtoh(&y.slice(r.clone()), &mut output.slice_mut(r))?;
    }
    p.finish(gpu)
}

#[test]
fn ping_pong_with_a_buffer_for_all_the_data() {
    expect_failure(
        "ping_pong_with_a_buffer_for_all_the_data",
        &["bytes of device memory were allocated", "chunks' worth", "one for all the data"],
        || ch08::ping_pong(ping_pong_with_whole_buffers),
    );
}

/// What runs beside a one-stream pipeline to pass for its overlap.
#[derive(Clone, Copy, PartialEq)]
enum Decoy {
    /// Kernels on a scratch pair, on a stream of their own, beside every copy: 8 of them, each
    /// over one element of the pair (the emulator's timeline charges a kernel for the buffers it
    /// is given, so some kernel then always runs while a copy does).
    Kernels,
    /// A copy the other way beside every copy: a scratch buffer down while a chunk goes up, a
    /// chunk of the input up (into scratch) while a chunk comes down.
    Copies,
}

fn ping_pong_with_decoys(decoy: Decoy) -> Box<PingPongFn> {
    Box::new(move |gpu, input, output, scale, shift, chunk_rows| {
        let p = Setup::new(gpu, scale, shift, 2)?;
        let (n, chunk) = (input.len(), chunk_rows * scale.len());
        let (pipe, side) = (&p.streams[0], &p.streams[1]);
        // SAFETY: on the pipe stream a chunk's upload fills x[..len] before affine reads it, and affine
        // y[..len] before the download reads it.
        let (mut x, mut y) = unsafe { (pipe.alloc::<f32>(chunk)?, pipe.alloc::<f32>(chunk)?) };
        // SAFETY: only the decoy kernels write dy (its first element), and nothing reads it back.
        let (mut dx, mut dy) = (side.alloc_zeros::<f32>(chunk)?, unsafe { side.alloc::<f32>(chunk) }?);
        // SAFETY: only the decoy downloads write it, and the host never reads it.
        let mut scratch = unsafe { gpu.alloc_pinned::<f32>(chunk) }?;
        for start in (0..n).step_by(chunk) {
            let len = chunk.min(n - start);
            side.wait(&pipe.record_event()?)?;
            match decoy {
                Decoy::Kernels => (0..8).try_for_each(|_| p.affine_first(1, &dx.slice(..), &mut dy.slice_mut(..), 1))?,
                Decoy::Copies => side.memcpy_dtoh(&dx.slice(..len), &mut scratch.slice_mut(..len))?,
            }
            pipe.memcpy_htod(&input.slice(start..start + len), &mut x.slice_mut(..len))?;
            p.affine(0, &x.slice(..len), &mut y.slice_mut(..len))?;
            side.wait(&pipe.record_event()?)?;
            match decoy {
                Decoy::Kernels => (0..8).try_for_each(|_| p.affine_first(1, &dx.slice(..), &mut dy.slice_mut(..), 1))?,
                Decoy::Copies => side.memcpy_htod(&input.slice(start..start + len), &mut dx.slice_mut(..len))?,
            }
            pipe.memcpy_dtoh(&y.slice(..len), &mut output.slice_mut(start..start + len))?;
        }
        p.finish(gpu)
    })
}

#[test]
fn ping_pong_beside_decoy_kernels() {
    let report = expect_failure("ping_pong_beside_decoy_kernels", &["overlapped the pipeline's other work", "double buffering"], || {
        ch08::ping_pong(ping_pong_with_decoys(Decoy::Kernels))
    });
    // On the emulator's timeline the decoys are long enough to pass for the overlap (on a GPU
    // they may be shorter than the copies): the report says they did not count.
    if let Some(report) = report
        && report.contains("backend: emulator")
    {
        assert!(report.contains("only the pipeline's own count"), "the decoys should have passed the naive measure:{report}");
    }
}

#[test]
fn ping_pong_beside_decoy_copies() {
    let report = expect_failure("ping_pong_beside_decoy_copies", &["overlapped the pipeline's other work", "double buffering"], || {
        ch08::ping_pong(ping_pong_with_decoys(Decoy::Copies))
    });
    // Each decoy copy is as long as the copy it runs beside: on the emulator's timeline exactly,
    // on a GPU nearly (the two directions' speeds differ a little).
    if let Some(report) = report
        && report.contains("backend: emulator")
    {
        assert!(report.contains("only the pipeline's own count"), "the decoys should have passed the naive measure:{report}");
    }
}

/// The solution, written for the book's 64 channels: the parameters widened (or cut) to 64.
#[test]
fn ping_pong_for_a_fixed_width() {
    let widen = |v: &[f32]| (0..64).map(|c| v[c % v.len()]).collect::<Vec<f32>>();
    expect_failure("ping_pong_for_a_fixed_width", &["drawn from the seed"], || {
        ch08::ping_pong(|gpu, input, output, scale, shift, chunk_rows| {
            solutions::ch08::ping_pong(gpu, input, output, &widen(scale), &widen(shift), chunk_rows)
        })
    });
}

/// The grader on the solution's kernel file with `edits` (a kernel-only exercise: the answer is
/// the source, named as the learner's file is).
fn ll_mutant(edits: &[(&str, &str)]) -> impl FnOnce() -> GradeReport {
    let text = mutant("ch08/ll_buffers.cu", edits);
    move || ch08::ll_buffers(move || Source::text("kernels/ch08/ll_buffers.cu", text.clone()))
}

/// The receiver waits for the counts, then makes up the tokens with the stage's own formula
/// instead of reading them from its buffer (before the stamp, this passed).
#[test]
fn ll_recv_rebuilds_the_tokens() {
    expect_failure(
        "ll_recv_rebuilds_the_tokens",
        &["the receiver rebuilt it instead of reading it from its buffer", "learns what arrived from its own buffer"],
        ll_mutant(&[(
            "= ll_slot(c, mine, s, k / c.hidden)[k % c.hidden];",
            "= ll_word_stamped(c.seed, c.stamp, c.op, s, c.rank, k / c.hidden, k % c.hidden);",
        )]),
    );
}

/// The receiver asks the stage's helper for the tokens.
#[test]
fn ll_recv_asks_ll_word() {
    expect_failure(
        "ll_recv_asks_ll_word",
        &["ll_recv called ll_word", "learns what arrived from its own buffer"],
        ll_mutant(&[("= ll_slot(c, mine, s, k / c.hidden)[k % c.hidden];", "= ll_word(c, s, k / c.hidden, k % c.hidden);")]),
    );
}

/// The receiver waits for the signals, then works the counts out with the stage's formula
/// instead of decoding them.
#[test]
fn ll_recv_rebuilds_the_counts() {
    expect_failure(
        "ll_recv_rebuilds_the_counts",
        &["received a count of", "learns each count from the signal word in its own buffer"],
        ll_mutant(&[(
            "int n = -ll_get_count(c, &mine.signals[s]) - 1;",
            "int n = ll_count_stamped(c.seed, c.stamp, c.tokens, c.op, s, c.rank);",
        )]),
    );
}
