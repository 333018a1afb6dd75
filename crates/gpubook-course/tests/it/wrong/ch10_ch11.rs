//! The graders of chapters 10 and 11 against plausible wrong answers: each must fail, and its
//! report must name the concept the mistake is about. A grader that cannot fail is a bug.
//!
//! Chapter 10's and the DualPipe exercise's graders run no kernels (they compare with
//! `gpubook::sim`); the chunk pair runs on the device, so without one that test prints SKIPPED.

use gpubook::chunk_pair::{ChunkPair, Step};
use gpubook::gpu::{Event, Result, Stream};
use gpubook::sim::{Costs, Layout, Op, Part, ProgramBuilder, Schedule, ScheduleKind, simulate};
use gpubook_course::grade::{ch10, ch11};
use gpubook_course::testing::expect_failure;

// ---- chapter 10 -------------------------------------------------------------------------------

/// The DeepSeek-V3 report's bubble formulas, taken as the answer: right for 1F1B, wrong for
/// ZB1P once W > F (the weight gradients can no longer fill the warm-up).
fn formula_bubbles(programs: &[Vec<Op>], c: &Costs) -> Vec<f64> {
    let split = programs.iter().flatten().any(|op| matches!(op, Op::Bz(_)));
    let kind = if split { ScheduleKind::Zb1p } else { ScheduleKind::OneFOneB };
    vec![kind.formula_bubble(programs.len(), c); programs.len()]
}

#[test]
fn bubbles_from_the_formula() {
    expect_failure("bubbles_from_the_formula", &["idles 7", "formula (PP-1)(F+B-2W)", "W ≤ F and W ≤ B − W"], || {
        ch10::bubbles(formula_bubbles)
    });
}

/// Times the ops right but counts only the gaps between a rank's first and last op, leaving out
/// the wait before the first and after the last. (Its own timing: an answer that asks
/// gpubook::sim is refused for that alone.)
fn gaps_only(programs: &[Vec<Op>], c: &Costs) -> Vec<f64> {
    spans(programs, c)
        .iter()
        .map(|s| {
            let busy: f64 = s.iter().map(|(a, b)| b - a).sum();
            s.last().map_or(0.0, |l| l.1) - s.first().map_or(0.0, |f| f.0) - busy
        })
        .collect()
}

/// (start, end) of every op of single-chunk programs, rank by rank: an op starts when its rank is
/// free and its inputs (the previous stage's F, the next stage's B or Bz, this stage's Bz) ended.
fn spans(programs: &[Vec<Op>], c: &Costs) -> Vec<Vec<(f64, f64)>> {
    let stages = programs.len();
    let mut ended: std::collections::HashMap<(Part, usize, usize), f64> = Default::default();
    let mut out = vec![Vec::new(); stages];
    let mut free = vec![0.0f64; stages];
    let mut moved = true;
    while moved {
        moved = false;
        for s in 0..stages {
            while let Some(op) = programs[s].get(out[s].len()) {
                let mb = op.slots()[0].mb;
                let needs = match op {
                    Op::F(_) if s == 0 => vec![],
                    Op::F(_) => vec![(Part::Forward, s - 1, mb)],
                    Op::B(_) | Op::Bz(_) if s + 1 == stages => vec![(Part::Forward, s, mb)],
                    Op::B(_) | Op::Bz(_) => vec![(Part::Forward, s, mb), (Part::InputGrad, s + 1, mb)],
                    _ => vec![(Part::InputGrad, s, mb)],
                };
                let Some(inputs) = needs.iter().map(|k| ended.get(k).copied()).collect::<Option<Vec<f64>>>() else { break };
                let start = inputs.into_iter().fold(free[s], f64::max);
                let end = start + c.duration(op);
                let part = match op {
                    Op::F(_) => Part::Forward,
                    Op::W(_) => Part::WeightGrad,
                    _ => Part::InputGrad,
                };
                ended.insert((part, s, mb), end);
                free[s] = end;
                out[s].push((start, end));
                moved = true;
            }
        }
    }
    out
}

#[test]
fn bubbles_without_warm_up_and_cool_down() {
    expect_failure("bubbles_without_warm_up_and_cool_down", &["wait before its first op", "count"], || ch10::bubbles(gaps_only));
}

/// GPipe's order: every forward, then every backward. It runs, with 1F1B's bubble, but rank 0
/// holds all N micro-batches' activations instead of PP.
fn gpipe(pp: usize, n: usize) -> Vec<Vec<Op>> {
    (0..pp)
        .map(|_| {
            let mut p = ProgramBuilder::new(1);
            for _ in 0..n {
                p.f(0);
            }
            for _ in 0..n {
                p.b(0);
            }
            p.finish()
        })
        .collect()
}

#[test]
fn bubbles_from_the_simulator() {
    let from_the_simulator = |programs: &[Vec<Op>], c: &Costs| {
        let schedule = Schedule {
            kind: ScheduleKind::OneFOneB,
            layout: Layout::Linear { ranks: programs.len(), microbatches: programs[0].len() / 2 },
            programs: programs.to_vec(),
        };
        simulate(&schedule, c).map(|r| r.bubbles).unwrap_or_default()
    };
    expect_failure(
        "bubbles_from_the_simulator",
        &["your answer called gpubook's own gpubook::sim::simulate", "write this yourself"],
        || ch10::bubbles(from_the_simulator),
    );
}

#[test]
fn one_f_one_b_from_the_library() {
    let generated = |pp: usize, n: usize| ScheduleKind::OneFOneB.generate(pp, n).unwrap().programs;
    expect_failure("one_f_one_b_from_the_library", &["gpubook::sim::ScheduleKind::generate"], || ch10::one_f_one_b(generated));
}

/// (A call from a thread the answer spawns is caught too while it is the only answer being
/// graded, as under `gpubook check`: gpubook-sim's reference.rs tests that.)
#[test]
fn dualpipe_from_the_library() {
    let generated = |pp: usize, n: usize| ScheduleKind::DualPipe.generate(pp, n).unwrap().programs;
    expect_failure("dualpipe_from_the_library", &["gpubook::sim::ScheduleKind::generate"], || ch11::dualpipe(generated));
}

#[test]
fn one_f_one_b_as_gpipe() {
    expect_failure(
        "one_f_one_b_as_gpipe",
        &["rank 0 op #4: expected `B` (micro-batch 0), got `F` (micro-batch 4)", "activation memory"],
        || ch10::one_f_one_b(gpipe),
    );
}

// ---- chapter 11 -------------------------------------------------------------------------------

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
