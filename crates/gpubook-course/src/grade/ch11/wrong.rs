//! Chapter 11's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch11;
use crate::grade::testing::expect_failure;
use gpubook::chunk_pair::{ChunkPair, Step};
use gpubook::gpu::{Event, Result, Stream};
use gpubook::sim::{Op, ProgramBuilder, ScheduleKind};
use gpubook_labs::chunk_pair::{Lane, Plan};

/// (A call from a thread the answer spawns is caught too while it is the only answer being
/// graded, as under `gpubook check`: gpubook-sim's reference.rs tests that.)
#[test]
fn dualpipe_from_the_library() {
    let generated = |pp: usize, n: usize| ScheduleKind::DualPipe.generate(pp, n).unwrap().programs;
    expect_failure("dualpipe_from_the_library", &["gpubook::sim::ScheduleKind::generate"], || ch11::dualpipe(generated));
}

/// DualPipe with phase 3's backwards run whole (`B1`) instead of split (`B1z W`): the input
/// gradient then leaves only after the weight gradient is done.
fn dualpipe_without_split(pp: usize, n: usize) -> Vec<Vec<Op>> {
    (0..pp)
        .map(|rank| {
            let (h, half, m) = (rank.min(pp - 1 - rank), pp / 2, n / 2);
            let edge = half - h - 1;
            let mut p = ProgramBuilder::new(2);
            for _ in 0..2 * edge {
                p.f(0);
            }
            for _ in 0..h + 1 {
                p.f(0).f(1);
            }
            for _ in 0..edge {
                p.b(1).f(1); // the mistake: B1 instead of B1z W
            }
            for i in 0..m - 2 * half + h + 1 {
                if i == 0 && edge == 0 {
                    p.f(0).b(1);
                } else {
                    p.pair(0, 1);
                }
                p.pair(1, 0);
            }
            for _ in 0..edge {
                p.b(1).pair(1, 0);
            }
            for i in 0..2 * (h + 1) {
                if i < h + 1 {
                    p.b(1 - i % 2);
                } else {
                    p.bz(1 - i % 2);
                }
            }
            for _ in 0..edge {
                p.w().bz(0);
            }
            while p.pending_w() > 0 {
                p.w();
            }
            p.finish()
        })
        .collect()
}

#[test]
fn dualpipe_without_the_zero_bubble_split() {
    expect_failure("dualpipe_without_the_zero_bubble_split", &["expected `B1z`", "got `B1`", "zero-bubble split"], || {
        ch11::dualpipe(dualpipe_without_split)
    });
}

/// The pair on two streams but chunk by chunk, events and all: correct values, and no overlap,
/// since each stream runs in issue order.
fn chunk_by_chunk(pair: &mut ChunkPair, compute: &Stream, comm: &Stream) -> Result<()> {
    for chain in [Step::FORWARD, Step::BACKWARD] {
        let mut last: Option<(bool, Event)> = None;
        for step in chain {
            let stream = if step.is_communication() { comm } else { compute };
            if let Some((was_comm, event)) = &last
                && *was_comm != step.is_communication()
            {
                stream.wait(event)?;
            }
            pair.run(step, stream)?;
            last = Some((step.is_communication(), stream.record_event()?));
        }
    }
    Ok(())
}

#[test]
fn chunk_pair_chunk_by_chunk() {
    expect_failure("chunk_pair_chunk_by_chunk", &["0% of the communication was hidden", "DualPipe's overlap"], || {
        ch11::chunk_pair(chunk_by_chunk)
    });
}

/// DualPipe's order with the events left out: DISPATCH(F) may copy ATTN(F)'s output before the
/// kernel has written it.
fn no_events(pair: &mut ChunkPair, compute: &Stream, comm: &Stream) -> Result<()> {
    for step in [Step::AttnF, Step::CombineB, Step::MlpB, Step::DispatchF, Step::MlpF, Step::DispatchB, Step::AttnB, Step::CombineF] {
        pair.run(step, if step.is_communication() { comm } else { compute })?;
    }
    Ok(())
}

#[test]
fn chunk_pair_without_events() {
    expect_failure("chunk_pair_without_events", &["nothing orders the two", "unordered unless an event"], || ch11::chunk_pair(no_events));
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
