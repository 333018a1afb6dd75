//! Answers to chapters 7 to 11 that get the numbers without doing what the exercise teaches, each
//! of which passed its grader before the grader held the concept: results computed or finished
//! on the host, fresh buffers instead of reused ones, decoy copies and kernels that pass for
//! overlap, a receiver that rebuilds what it should have read, the library's own plans and rules
//! called instead of written, sizes a fixed grid covers. Each must fail with a report that names
//! the concept. Wrong answers are mutations of the solutions where they can be (they follow the
//! solutions when those change); the rest are written out here. Without a device every test that
//! needs one prints SKIPPED.

use gpubook::chunk_pair::ChunkPair;
use gpubook_course::grade::GradeReport;

use gpubook::ep::CombineInput;
use gpubook::gpu::{Event, Function, Gpu, LaunchConfig, MappedHostSlice, PinnedHostSlice, Result, Source, Stream};
use gpubook::sim::{Costs, Layout, Op};
use gpubook::testing::workspace_file;
use gpubook_course::grade::{ch07, ch08, ch09, ch10, ch11};
use gpubook_course::testing::{expect_failure, mutant, with_kernel};
use gpubook_labs::chunk_pair::{Lane, Plan};

const CONCEPT: &str = "the kernel does the work";

fn solution_kernel(gpu: &Gpu, rel: &str, name: &str) -> Result<Function> {
    gpu.load_module(Source::file(workspace_file(&format!("solutions/kernels/{rel}"))))?.load_function(name)
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

fn axpb_on_the_host(rounds: &[Vec<f32>], a: f32, b: f32) -> Vec<Vec<f32>> {
    rounds.iter().map(|x| x.iter().map(|v| a * v + b).collect()).collect()
}

// ---- ch07-three-streams -----------------------------------------------------------------------

#[test]
fn three_streams_computed_on_the_host() {
    expect_failure("three_streams_computed_on_the_host", &["`round 0's y` is not what came back", CONCEPT], || {
        ch07::three_streams(|_gpu, rounds, a, b| Ok(axpb_on_the_host(rounds, a, b)))
    });
}

/// The solution's streams and events around a kernel that stores nothing; the host does the sum.
#[test]
fn three_streams_finished_on_the_host() {
    let idle = mutant("ch07/axpb.cu", &[("if (i < n) y[i] = a * x[i] + b;", "(void)i;")]);
    expect_failure("three_streams_finished_on_the_host", &["`round 0's y` is not what came back", CONCEPT], || {
        ch07::three_streams(|gpu, rounds, a, b| {
            with_kernel(gpu, "ch07/axpb.cu", idle.clone(), || solutions::ch07::three_streams(gpu, rounds, a, b))?;
            Ok(axpb_on_the_host(rounds, a, b))
        })
    });
}

/// The host computes y and sends it through the solution's pipeline as x, with a = 1, b = 0.
#[test]
fn three_streams_uploading_the_answer() {
    expect_failure("three_streams_uploading_the_answer", &["none of the inputs (the rounds' x)", CONCEPT], || {
        ch07::three_streams(|gpu, rounds, a, b| solutions::ch07::three_streams(gpu, &axpb_on_the_host(rounds, a, b), 1.0, 0.0))
    });
}

/// How a wrong `three_streams` gets around the write-after-read waits.
#[derive(Clone, Copy, PartialEq)]
enum Around {
    /// A new x and y every round: nothing is overwritten, so no write-after-read wait is needed.
    FreshBuffers,
    /// The rounds take turns (each upload waits for the last download), and one more upload at
    /// the end runs beside the last download: a copy that overlaps, though no round does.
    DecoyUpload,
    /// The write-after-read waits made by the host (`Event::synchronize`), not by the streams:
    /// the rounds still overlap, and the ordering check sees no hazard.
    HostWaits,
}

type ThreeStreamsFn = dyn Fn(&Gpu, &[Vec<f32>], f32, f32) -> Result<Vec<Vec<f32>>>;

fn three_streams_around(how: Around) -> Box<ThreeStreamsFn> {
    Box::new(move |gpu, rounds, a, b| {
        let n = rounds[0].len();
        let f = solution_kernel(gpu, "ch07/axpb.cu", "axpb")?;
        let (up, work, down) = (gpu.new_stream()?, gpu.new_stream()?, gpu.new_stream()?);
        let (mut host_x, mut host_y) = (Vec::new(), Vec::new());
        for r in rounds {
            let mut hx = unsafe { gpu.alloc_pinned::<f32>(n) }?;
            hx.as_mut_slice()?.copy_from_slice(r);
            host_x.push(hx);
            host_y.push(unsafe { gpu.alloc_pinned::<f32>(n) }?);
        }
        let mut buffers = Vec::new();
        let fresh = || -> Result<_> { Ok(unsafe { (up.alloc::<f32>(n)?, work.alloc::<f32>(n)?) }) };
        buffers.push(fresh()?);
        let (mut y_read, mut x_read): (Option<Event>, Option<Event>) = (None, None);
        for r in 0..rounds.len() {
            if how == Around::FreshBuffers && r > 0 {
                buffers.push(fresh()?);
            }
            let (x, y) = buffers.last_mut().expect("a pair");
            if how == Around::DecoyUpload
                && let Some(e) = &y_read
            {
                up.wait(e)?; // take turns: the whole last round is done
            }
            if how == Around::HostWaits
                && let Some(e) = &x_read
            {
                e.synchronize()?;
            }
            up.memcpy_htod(&host_x[r], x)?;
            work.wait(&up.record_event()?)?;
            if how == Around::HostWaits
                && let Some(e) = &y_read
            {
                e.synchronize()?;
            }
            if how == Around::DecoyUpload
                && let Some(e) = &y_read
            {
                work.wait(e)?;
            }
            let n_i = n as i32;
            let mut l = work.launch_builder(&f);
            l.arg(&*x).arg(&mut *y).arg(&a).arg(&b).arg(&n_i);
            unsafe { l.launch(cfg(n)) }?;
            let done = work.record_event()?;
            down.wait(&done)?;
            x_read = Some(done);
            down.memcpy_dtoh(&*y, &mut host_y[r])?;
            y_read = Some(down.record_event()?);
        }
        if how == Around::DecoyUpload {
            let (x, _) = buffers.last_mut().expect("a pair");
            up.wait(x_read.as_ref().expect("a round ran"))?;
            up.memcpy_htod(&host_x[0], x)?;
        }
        host_y.iter().map(|h| Ok(h.as_slice()?.to_vec())).collect()
    })
}

#[test]
fn three_streams_with_fresh_buffers_every_round() {
    expect_failure(
        "three_streams_with_fresh_buffers_every_round",
        &["device buffers for x", "that reuse is what the write-after-read waits are for"],
        || ch07::three_streams(three_streams_around(Around::FreshBuffers)),
    );
}

#[test]
fn three_streams_with_the_host_waiting_on_events() {
    expect_failure(
        "three_streams_with_the_host_waiting_on_events",
        &["the host waited for the device (`synchronize event`) inside the rounds", "order the streams with events"],
        || ch07::three_streams(three_streams_around(Around::HostWaits)),
    );
}

#[test]
fn three_streams_taking_turns_with_a_decoy_upload() {
    expect_failure(
        "three_streams_taking_turns_with_a_decoy_upload",
        &["3 uploads, 2 kernel launches and 2 downloads for 2 rounds", "an extra copy is not the rounds overlapping"],
        || ch07::three_streams(three_streams_around(Around::DecoyUpload)),
    );
}

// ---- ch08-ping-pong ---------------------------------------------------------------------------

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
        &["is not what the device→host copy into it carried", "changed on the host", CONCEPT],
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
    expect_failure("ping_pong_without_the_device", &["no device→host copy wrote `output`", CONCEPT], || {
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
    expect_failure("ping_pong_uploading_the_answer", &["none of the inputs (input, scale, shift)", CONCEPT], || {
        ch08::ping_pong(|gpu, input, output, scale, shift, chunk_rows| {
            let want = affine_on_the_host(input, scale, shift)?;
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
        unsafe { l.launch(cfg(n)) }
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

/// One stream and one pair of chunk buffers, so that nothing of the pipeline overlaps, while a
/// second stream runs decoys beside every copy.
type PingPongFn = dyn Fn(&Gpu, &PinnedHostSlice<f32>, &mut PinnedHostSlice<f32>, &[f32], &[f32], usize) -> Result<()>;

fn ping_pong_with_decoys(decoy: Decoy) -> Box<PingPongFn> {
    Box::new(move |gpu, input, output, scale, shift, chunk_rows| {
        let p = Setup::new(gpu, scale, shift, 2)?;
        let (n, chunk) = (input.len(), chunk_rows * scale.len());
        let (pipe, side) = (&p.streams[0], &p.streams[1]);
        let (mut x, mut y) = unsafe { (pipe.alloc::<f32>(chunk)?, pipe.alloc::<f32>(chunk)?) };
        let (mut dx, mut dy) = (side.alloc_zeros::<f32>(chunk)?, unsafe { side.alloc::<f32>(chunk) }?);
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

// ---- ch08-ll-buffers --------------------------------------------------------------------------

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

// ---- ch09-zero-copy-combine -------------------------------------------------------------------

/// The right bits, from a run on another device, returned after a run on the grader's device
/// whose combine stores nothing.
#[test]
fn zero_copy_combine_from_another_device() {
    let idle = mutant("ch09/combine.cu", &[("out[t * hidden + c] = acc;", "(void)acc;")]);
    expect_failure("zero_copy_combine_from_another_device", &["`out` is not what came back", CONCEPT], || {
        ch09::zero_copy_combine(solutions::ch09::combine_with_copy, |gpu, p| {
            let out = solutions::ch09::combine_with_copy(&Gpu::new()?, p)?;
            with_kernel(gpu, "ch09/combine.cu", idle.clone(), || solutions::ch09::combine_zero_copy(gpu, p))?;
            Ok(out)
        })
    });
}

/// A kernel of the answer's own that copies staged rows into the payload slots.
const STAGE_ROWS: &str = r#"
extern "C" __global__ void stage_rows(const float* y, float* payload, int ld, int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c < hidden && m < rows) payload[m * ld + c] = y[m * hidden + c];
}
"#;

/// The expert output staged in a tensor of its own and copied into the messages by a kernel (no
/// device-to-device copy in sight), with an expert launch of no rows into the send buffer, so
/// that expert_forward "writes" a buffer the combine reads.
fn combine_staged_by_a_kernel(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let s = gpu.default_stream();
    let m = gpu.load_module(Source::file(workspace_file("solutions/kernels/ch09/combine.cu")))?;
    let stage = gpu.load_module(Source::text("stage_rows.cu", STAGE_ROWS))?.load_function("stage_rows")?;
    let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
    let msg_words = 4 + hidden;
    let (x, expert_of, weight, scale, bias) =
        (s.clone_htod(&p.x)?, s.clone_htod(&p.expert_of)?, s.clone_htod(&p.weight)?, s.clone_htod(&p.scale)?, s.clone_htod(&p.bias)?);
    let mut send = unsafe { s.alloc::<u8>(rows * msg_words * 4) }?;
    let (mw, r, k, h, t) = (msg_words as i32, rows as i32, p.top_k as i32, hidden as i32, p.tokens as i32);
    {
        let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
        let wh = m.load_function("write_headers")?;
        let mut l = s.launch_builder(&wh);
        l.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
        unsafe { l.launch(cfg(rows)) }?;
    }
    let grid = |rows: usize| LaunchConfig {
        grid_dim: ((hidden as u32).div_ceil(64), rows.max(1) as u32, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    let expert = m.load_function("expert_forward")?;
    let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
    {
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&h).arg(&r).arg(&h);
        unsafe { l.launch(grid(rows)) }?;
    }
    {
        let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
        let none = 0i32;
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&none).arg(&h);
        unsafe { l.launch(grid(1)) }?;
        let mut l = s.launch_builder(&stage);
        l.arg(&y).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
        unsafe { l.launch(grid(rows)) }?;
    }
    let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
    let words = send.view_as::<i32>(0, rows * msg_words)?;
    let f = m.load_function("combine")?;
    let mut l = s.launch_builder(&f);
    l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
    unsafe { l.launch(grid(p.tokens)) }?;
    s.clone_dtoh(&out)
}

#[test]
fn zero_copy_combine_staged_by_a_kernel() {
    expect_failure("zero_copy_combine_staged_by_a_kernel", &["expert_forward ran 2 times", "zero copy"], || {
        ch09::zero_copy_combine(solutions::ch09::combine_with_copy, combine_staged_by_a_kernel)
    });
}

// ---- ch09-expert-counts -----------------------------------------------------------------------

fn counts_on_the_host(ids: &[i32], experts: usize) -> Vec<u32> {
    let mut c = vec![0u32; experts];
    for &i in ids {
        c[i as usize] += 1;
    }
    c
}

/// The host counts into the mapped memory; a launch of no ids is there to be counted.
#[test]
fn expert_counts_written_by_the_host() {
    expect_failure("expert_counts_written_by_the_host", &["the host wrote the counts (as_mut_slice)", CONCEPT], || {
        ch09::expert_counts(|gpu, ids, experts| {
            let f = solution_kernel(gpu, "ch09/count_experts.cu", "count_experts")?;
            let s = gpu.default_stream();
            let ids_d = s.clone_htod(ids)?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            counts.as_mut_slice()?.copy_from_slice(&counts_on_the_host(ids, experts));
            let none = 0i32;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&none).arg(&mut counts);
            unsafe { l.launch(cfg(1)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

const COPY_COUNTS: &str = r#"
extern "C" __global__ void copy_counts(const unsigned* from, unsigned* to, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i];
}
"#;

/// The host counts, uploads the counts, and a kernel copies them into the mapped memory.
#[test]
fn expert_counts_uploaded_from_the_host() {
    expect_failure("expert_counts_uploaded_from_the_host", &["none of the inputs (the ids)", CONCEPT], || {
        ch09::expert_counts(|gpu, ids, experts| -> Result<MappedHostSlice<u32>> {
            let f = gpu.load_module(Source::text("copy_counts.cu", COPY_COUNTS))?.load_function("copy_counts")?;
            let s = gpu.default_stream();
            let from = s.clone_htod(&counts_on_the_host(ids, experts))?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            let n = experts as i32;
            let mut l = s.launch_builder(&f);
            l.arg(&from).arg(&mut counts).arg(&n);
            unsafe { l.launch(cfg(experts)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

/// The solution with a grid sized for the book's largest case (100,003 ids): the seed's case
/// is larger.
#[test]
fn expert_counts_with_a_fixed_grid() {
    expect_failure("expert_counts_with_a_fixed_grid", &["drawn from the seed"], || {
        ch09::expert_counts(|gpu, ids, experts| {
            let f = solution_kernel(gpu, "ch09/count_experts.cu", "count_experts")?;
            let s = gpu.default_stream();
            let ids_d = s.clone_htod(ids)?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            let n = ids.len() as i32;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut counts);
            unsafe { l.launch(cfg(100_003)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

// ---- chapters 10 and 11 -----------------------------------------------------------------------

/// The solution's timing, with the library's dependency rules asked along the way.
#[test]
fn bubbles_from_the_librarys_dependency_rules() {
    expect_failure(
        "bubbles_from_the_librarys_dependency_rules",
        &["your answer called gpubook's own gpubook::sim::deps::needs", "write this yourself"],
        || {
            ch10::bubbles(|programs: &[Vec<Op>], costs: &Costs| {
                let layout = Layout::Linear { ranks: programs.len(), microbatches: 1 };
                for (rank, program) in programs.iter().enumerate() {
                    for op in program {
                        let _ = gpubook::sim::deps::op_needs(&layout, rank, op);
                    }
                }
                solutions::ch10::bubbles(programs, costs)
            })
        },
    );
}

#[test]
fn chunk_pair_by_the_librarys_plan() {
    expect_failure("chunk_pair_by_the_librarys_plan", &["gpubook_labs::chunk_pair::Plan::run", "write this yourself"], || {
        ch11::chunk_pair(|pair, compute, comm| Plan::DualPipe.run(pair, compute, comm))
    });
}

/// The library's DualPipe order, with the events written out.
fn in_the_librarys_order(pair: &mut ChunkPair, compute: &Stream, comm: &Stream) -> Result<()> {
    let mut done: Vec<(gpubook::chunk_pair::Step, Lane, Event)> = Vec::new();
    for (step, lane) in Plan::DualPipe.order() {
        let stream = if lane == Lane::Compute { compute } else { comm };
        if let Some((_, from, event)) = done.iter().find(|(s, _, _)| Some(*s) == step.after())
            && *from != lane
        {
            stream.wait(event)?;
        }
        pair.run(step, stream)?;
        done.push((step, lane, stream.record_event()?));
    }
    Ok(())
}

#[test]
fn chunk_pair_in_the_librarys_order() {
    expect_failure("chunk_pair_in_the_librarys_order", &["gpubook_labs::chunk_pair::Plan::order", "write this yourself"], || {
        ch11::chunk_pair(in_the_librarys_order)
    });
}

// ---- rules that read the emulator's access counts (skipped, and said so, on a GPU) -------------

/// Whether this test can run: the rule it shows reads the emulator's access counts.
fn on_the_emulator(test: &str) -> bool {
    match Gpu::new() {
        Ok(gpu) if gpu.backend() == gpubook::gpu::BackendKind::Emulator => true,
        Ok(_) => {
            println!("SKIPPED {test}: the rule reads the emulator's access counts; a GPU grader reports it as a skipped check");
            false
        }
        Err(e) => {
            println!("SKIPPED {test}: no device: {e}");
            false
        }
    }
}

/// The expert kernel under another name, writing a staging tensor.
const MY_EXPERT: &str = r#"
extern "C" __global__ void my_expert(const float* x, const int* expert_of, const float* scale, const float* bias, float* y,
                                     int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c >= hidden || m >= rows) return;
    int e = expert_of[m];
    float v = x[m * hidden + c] * scale[e * hidden + c] + bias[e * hidden + c];
    y[m * hidden + c] = v > 0.0f ? v : 0.0f;
}
extern "C" __global__ void stage_rows(const float* y, float* payload, int ld, int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c < hidden && m < rows) payload[m * ld + c] = y[m * hidden + c];
}
"#;

/// The expert rows computed by a renamed copy of expert_forward into a staging tensor and copied
/// into the messages by a kernel; then one expert_forward of no rows "writes" the send buffer,
/// last, so that every rule about which kernel wrote what holds.
fn combine_by_a_renamed_expert(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let s = gpu.default_stream();
    let m = gpu.load_module(Source::file(workspace_file("solutions/kernels/ch09/combine.cu")))?;
    let mine = gpu.load_module(Source::text("my_expert.cu", MY_EXPERT))?;
    let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
    let msg_words = 4 + hidden;
    let (x, expert_of, weight, scale, bias) =
        (s.clone_htod(&p.x)?, s.clone_htod(&p.expert_of)?, s.clone_htod(&p.weight)?, s.clone_htod(&p.scale)?, s.clone_htod(&p.bias)?);
    let mut send = unsafe { s.alloc::<u8>(rows * msg_words * 4) }?;
    let (mw, r, k, h, t) = (msg_words as i32, rows as i32, p.top_k as i32, hidden as i32, p.tokens as i32);
    {
        let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
        let wh = m.load_function("write_headers")?;
        let mut l = s.launch_builder(&wh);
        l.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
        unsafe { l.launch(cfg(rows)) }?;
    }
    let grid = |rows: usize| LaunchConfig {
        grid_dim: ((hidden as u32).div_ceil(64), rows.max(1) as u32, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
    {
        let f = mine.load_function("my_expert")?;
        let mut l = s.launch_builder(&f);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&r).arg(&h);
        unsafe { l.launch(grid(rows)) }?;
    }
    {
        let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
        let stage = mine.load_function("stage_rows")?;
        let mut l = s.launch_builder(&stage);
        l.arg(&y).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
        unsafe { l.launch(grid(rows)) }?;
        let (expert, none) = (m.load_function("expert_forward")?, 0i32);
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&none).arg(&h);
        unsafe { l.launch(grid(1)) }?;
    }
    let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
    let words = send.view_as::<i32>(0, rows * msg_words)?;
    let f = m.load_function("combine")?;
    let mut l = s.launch_builder(&f);
    l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
    unsafe { l.launch(grid(p.tokens)) }?;
    s.clone_dtoh(&out)
}

#[test]
fn zero_copy_combine_by_a_renamed_expert() {
    if !on_the_emulator("zero_copy_combine_by_a_renamed_expert") {
        return;
    }
    expect_failure(
        "zero_copy_combine_by_a_renamed_expert",
        &["expert_forward stored 0 bytes into the send buffer, where the expert rows", "zero copy"],
        || ch09::zero_copy_combine(solutions::ch09::combine_with_copy, combine_by_a_renamed_expert),
    );
}

const SERIAL_COUNTS: &str = r#"
extern "C" __global__ void count_serial(const int* ids, int n, unsigned int* counts) {
    for (int i = 0; i < n; i++) atomicAdd(&counts[ids[i]], 1u);
}
extern "C" __global__ void count_plain(const int* ids, int n, unsigned int* counts) {
    for (int i = 0; i < n; i++) counts[ids[i]] += 1u;
}
"#;

/// The counts made by one thread, `kernel` of SERIAL_COUNTS, launched as <<<1, 1>>>.
fn counted_by_one_thread(kernel: &'static str) -> impl Fn(&Gpu, &[i32], usize) -> Result<MappedHostSlice<u32>> {
    move |gpu, ids, experts| {
        let f = gpu.load_module(Source::text("serial_counts.cu", SERIAL_COUNTS))?.load_function(kernel)?;
        let s = gpu.default_stream();
        let ids_d = s.clone_htod(ids)?;
        let mut counts = gpu.alloc_mapped::<u32>(experts)?;
        let n = ids.len() as i32;
        let mut l = s.launch_builder(&f);
        l.arg(&ids_d).arg(&n).arg(&mut counts);
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }) }?;
        s.synchronize()?;
        Ok(counts)
    }
}

#[test]
fn expert_counts_by_one_thread() {
    if !on_the_emulator("expert_counts_by_one_thread") {
        return;
    }
    expect_failure(
        "expert_counts_by_one_thread",
        &["one thread of `count_serial` made 1000 atomic adds, for 1000 token ids", "the work is spread over the threads"],
        || ch09::expert_counts(counted_by_one_thread("count_serial")),
    );
}

#[test]
fn expert_counts_without_atomics() {
    if !on_the_emulator("expert_counts_without_atomics") {
        return;
    }
    expect_failure(
        "expert_counts_without_atomics",
        &["the kernels made 0 atomic adds into the counts for 1 token id", "atomicAdd(&counts[id], 1)"],
        || ch09::expert_counts(counted_by_one_thread("count_plain")),
    );
}
