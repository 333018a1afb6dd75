//! Chapter 7's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch07;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, cfg_1d, expect_failure, mutant, solution_kernel, with_kernel, workspace_kernel};
use gpubook::gpu::{Event, Gpu, Result};

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
        let f = gpu.load_module(workspace_kernel("solutions/kernels/ch07/axpb.cu"))?.load_function("axpb")?;
        let (up, work, down) = (gpu.new_stream()?, gpu.new_stream()?, gpu.new_stream()?);
        // SAFETY: each round's upload fills all of x before axpb reads it (via an event, or a host wait).
        let mut x = unsafe { up.alloc::<f32>(n) }?;
        x.set_label("x");
        // SAFETY: axpb writes all of y before the download reads it (via an event, or a host wait).
        let mut y = unsafe { work.alloc::<f32>(n) }?;
        y.set_label("y");
        let mut outs = Vec::new();
        let mut y_read: Option<Event> = None;
        for r in rounds {
            // SAFETY: filled from the round right below, before the upload reads it.
            let mut hx = unsafe { gpu.alloc_pinned::<f32>(n) }?;
            hx.as_mut_slice()?.copy_from_slice(r);
            // SAFETY: the download fills all n values before as_slice reads them.
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
            // SAFETY: x and y hold n floats and axpb's i < n guard keeps every thread inside them; the
            // missing wait (NoWriteAfterRead) can change the values it reads, not where.
            unsafe { l.launch(cfg_1d(n)) }?;
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

fn axpb_on_the_host(rounds: &[Vec<f32>], a: f32, b: f32) -> Vec<Vec<f32>> {
    rounds.iter().map(|x| x.iter().map(|v| a * v + b).collect()).collect()
}

#[test]
fn three_streams_computed_on_the_host() {
    expect_failure("three_streams_computed_on_the_host", &["`round 0's y` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch07::three_streams(|_gpu, rounds, a, b| Ok(axpb_on_the_host(rounds, a, b)))
    });
}

/// The solution's streams and events around a kernel that stores nothing; the host does the sum.
#[test]
fn three_streams_finished_on_the_host() {
    let idle = mutant("ch07/axpb.cu", &[("if (i < n) y[i] = a * x[i] + b;", "(void)i;")]);
    expect_failure("three_streams_finished_on_the_host", &["`round 0's y` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch07::three_streams(|gpu, rounds, a, b| {
            with_kernel(gpu, "ch07/axpb.cu", idle.clone(), || solutions::ch07::three_streams(gpu, rounds, a, b))?;
            Ok(axpb_on_the_host(rounds, a, b))
        })
    });
}

/// The host computes y and sends it through the solution's pipeline as x, with a = 1, b = 0.
#[test]
fn three_streams_uploading_the_answer() {
    expect_failure("three_streams_uploading_the_answer", &["none of the inputs (the rounds' x)", KERNEL_DOES_THE_WORK], || {
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

fn three_streams_around(how: Around) -> Box<ThreeStreamsFn> {
    Box::new(move |gpu, rounds, a, b| {
        let n = rounds[0].len();
        let f = solution_kernel(gpu, "ch07/axpb.cu", "axpb")?;
        let (up, work, down) = (gpu.new_stream()?, gpu.new_stream()?, gpu.new_stream()?);
        let (mut host_x, mut host_y) = (Vec::new(), Vec::new());
        for r in rounds {
            // SAFETY: filled from round r right below, before any upload reads it.
            let mut hx = unsafe { gpu.alloc_pinned::<f32>(n) }?;
            hx.as_mut_slice()?.copy_from_slice(r);
            host_x.push(hx);
            // SAFETY: round r's download fills all n values before as_slice reads them.
            host_y.push(unsafe { gpu.alloc_pinned::<f32>(n) }?);
        }
        let mut buffers = Vec::new();
        // SAFETY: each round's upload fills x before axpb reads it, and axpb fills y before the download.
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
            // SAFETY: x and y hold n floats and axpb's i < n guard keeps every thread inside them.
            unsafe { l.launch(cfg_1d(n)) }?;
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
