//! Chapters 7 to 9's graders against plausible wrong answers: each must fail, and its report must
//! name the idea the mistake misses (a grader that cannot fail is a bug). That the solutions pass
//! is the solutions crate's test. Without a device every test prints SKIPPED.
//!
//! Wrong kernels are mutations of the solutions' (`mutant`); the other mistakes are host code,
//! written here against the chapters' own kernels.

use gpubook::ep::CombineInput;
use gpubook::gpu::{Event, Gpu, LaunchConfig, MappedHostSlice, PinnedHostSlice, Result, Source};
use gpubook::testing::root;
use gpubook_course::grade::{ch07, ch08, ch09};
use gpubook_course::testing::{expect_failure, mutant};

fn kernel(path: &str) -> Source {
    Source::file(root().join(path))
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

// ---- ch07-three-streams ----

/// How a wrong `three_streams` orders its rounds.
#[derive(Clone, Copy, PartialEq)]
enum Rounds {
    /// Every wait but one: the next upload does not wait for the kernel that reads x.
    NoWriteAfterRead,
    /// No events at all; the host synchronises every stream after every round instead.
    HostSync,
}

type ThreeStreamsFn = dyn Fn(&Gpu, &[Vec<f32>], f32, f32) -> Result<Vec<Vec<f32>>>;

fn three_streams_wrong(how: Rounds) -> Box<ThreeStreamsFn> {
    Box::new(move |gpu, rounds, a, b| {
        let n = rounds[0].len();
        let f = gpu.load_module(kernel("solutions/kernels/ch07/axpb.cu"))?.load_function("axpb")?;
        let (up, work, down) = (gpu.new_stream()?, gpu.new_stream()?, gpu.new_stream()?);
        let mut x = unsafe { up.alloc::<f32>(n) }?;
        x.set_label("x");
        let mut y = unsafe { work.alloc::<f32>(n) }?;
        y.set_label("y");
        let mut outs = Vec::new();
        let mut y_read: Option<Event> = None;
        for r in rounds {
            let mut hx = unsafe { gpu.alloc_pinned::<f32>(n) }?;
            hx.as_mut_slice()?.copy_from_slice(r);
            let mut hy = unsafe { gpu.alloc_pinned::<f32>(n) }?;
            up.memcpy_htod(&hx, &mut x)?;
            if how == Rounds::NoWriteAfterRead {
                work.wait(&up.record_event()?)?;
                if let Some(e) = &y_read {
                    work.wait(e)?;
                }
            } else {
                up.synchronize()?;
            }
            let n_i = n as i32;
            let mut l = work.launch_builder(&f);
            l.arg(&x).arg(&mut y).arg(&a).arg(&b).arg(&n_i);
            unsafe { l.launch(cfg(n)) }?;
            if how == Rounds::NoWriteAfterRead {
                down.wait(&work.record_event()?)?;
            } else {
                work.synchronize()?;
            }
            down.memcpy_dtoh(&y, &mut hy)?;
            if how == Rounds::NoWriteAfterRead {
                y_read = Some(down.record_event()?);
            } else {
                down.synchronize()?;
            }
            outs.push(hy);
        }
        outs.iter().map(|h| Ok(h.as_slice()?.to_vec())).collect()
    })
}

#[test]
fn three_streams_without_the_write_after_read_wait() {
    expect_failure(
        "three_streams_without_the_write_after_read_wait",
        &["writes buffer `x`", "which `axpb` on stream", "nothing orders the two", "Reuse counts too"],
        || ch07::three_streams(three_streams_wrong(Rounds::NoWriteAfterRead)),
    );
}

#[test]
fn three_streams_with_host_synchronisation() {
    expect_failure("three_streams_with_host_synchronisation", &["the host waited for the device", "take turns"], || {
        ch07::three_streams(three_streams_wrong(Rounds::HostSync))
    });
}

// ---- ch08-ping-pong ----

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
        let f = gpu.load_module(kernel("solutions/kernels/ch08/channel_affine.cu"))?.load_function("channel_affine")?;
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
                unsafe { l.launch(cfg(len)) }?;
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

// ---- ch08-ll-buffers ----

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

// ---- ch09-zero-copy-combine ----

#[derive(Clone, Copy, PartialEq)]
enum Combine {
    /// The reference: staged rows, copied into the messages.
    Copy,
    /// "Zero copy" that still stages the rows and copies them.
    Staged,
    /// A view of the send buffer that forgets the header: rows start at byte 0.
    NoHeaderOffset,
}

fn combine(how: Combine) -> impl Fn(&Gpu, &CombineInput) -> Result<Vec<f32>> {
    move |gpu, p| {
        let s = gpu.default_stream();
        let m = gpu.load_module(kernel("solutions/kernels/ch09/combine.cu"))?;
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
            grid_dim: ((hidden as u32).div_ceil(64), rows as u32, 1),
            block_dim: (64, 1, 1),
            shared_mem_bytes: 0,
        };
        let expert = m.load_function("expert_forward")?;
        if how == Combine::NoHeaderOffset {
            let mut payload = send.view_2d_mut::<f32>(0, rows, hidden, msg_words)?;
            let mut l = s.launch_builder(&expert);
            l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
            unsafe { l.launch(grid(rows)) }?;
        } else {
            let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
            let mut l = s.launch_builder(&expert);
            l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&h).arg(&r).arg(&h);
            unsafe { l.launch(grid(rows)) }?;
            let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
            for i in 0..rows {
                s.memcpy_dtod(&y.slice(i * hidden..(i + 1) * hidden), &mut payload.row_mut(i))?;
            }
        }
        let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
        let words = send.view_as::<i32>(0, rows * msg_words)?;
        let f = m.load_function("combine")?;
        let mut l = s.launch_builder(&f);
        l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
        unsafe { l.launch(grid(p.tokens)) }?;
        s.clone_dtoh(&out)
    }
}

#[test]
fn zero_copy_combine_that_still_stages() {
    expect_failure(
        "zero_copy_combine_that_still_stages",
        &["device-to-device cop", "the expert output was staged", "view of the send buffer"],
        || ch09::zero_copy_combine(combine(Combine::Copy), combine(Combine::Staged)),
    );
}

#[test]
fn zero_copy_combine_without_the_header_offset() {
    // The emulator sees the combine read payload bytes nothing wrote; a GPU returns other bits.
    let report = expect_failure("zero_copy_combine_without_the_header_offset", &["HEADER_BYTES"], || {
        ch09::zero_copy_combine(combine(Combine::Copy), combine(Combine::NoHeaderOffset))
    });
    if let Some(report) = report {
        let said = ["not bit-identical to the copy path", "did not all land in the payload slots"];
        assert!(said.iter().any(|s| report.contains(s)), "the report should say where the rows went:{report}");
    }
}

// ---- ch09-expert-counts ----

#[derive(Clone, Copy, PartialEq)]
enum Counts {
    /// The counts are read before the kernel is known to be done.
    NoSync,
    /// Counted in device memory, then copied into the mapped buffer.
    Detour,
}

fn counts(how: Counts) -> impl Fn(&Gpu, &[i32], usize) -> Result<MappedHostSlice<u32>> {
    move |gpu, ids, experts| {
        let f = gpu.load_module(kernel("solutions/kernels/ch09/count_experts.cu"))?.load_function("count_experts")?;
        let s = gpu.default_stream();
        let ids_d = s.clone_htod(ids)?;
        let n = ids.len() as i32;
        let mut counts = gpu.alloc_mapped::<u32>(experts)?;
        counts.set_label("counts");
        if how == Counts::NoSync {
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut counts);
            unsafe { l.launch(cfg(ids.len())) }?;
        } else {
            let mut c = s.alloc_zeros::<u32>(experts)?;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut c);
            unsafe { l.launch(cfg(ids.len())) }?;
            s.memcpy_dtod(&c, &mut counts)?;
            s.synchronize()?;
        }
        Ok(counts)
    }
}

#[test]
fn expert_counts_read_before_the_kernel_is_done() {
    expect_failure(
        "expert_counts_read_before_the_kernel_is_done",
        &["mapped buffer `counts`", "count_experts", "has not waited for it"],
        || ch09::expert_counts(counts(Counts::NoSync)),
    );
}

#[test]
fn expert_counts_through_a_device_buffer() {
    expect_failure("expert_counts_through_a_device_buffer", &["copied after the counting", "straight into the mapped memory"], || {
        ch09::expert_counts(counts(Counts::Detour))
    });
}
