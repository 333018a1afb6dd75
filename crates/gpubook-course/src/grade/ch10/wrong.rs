//! Chapter 10's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch10;
use crate::grade::testing::expect_failure;
use gpubook::sim::{Costs, Layout, Op, Part, ProgramBuilder, Schedule, ScheduleKind, simulate};

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

#[test]
fn one_f_one_b_as_gpipe() {
    expect_failure(
        "one_f_one_b_as_gpipe",
        &["rank 0 op #4: expected `B` (micro-batch 0), got `F` (micro-batch 4)", "activation memory"],
        || ch10::one_f_one_b(gpipe),
    );
}

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
