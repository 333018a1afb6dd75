//! Chapter 10: pipeline parallelism, from 1F1B to zero bubble. No kernels here: a schedule is a
//! plan of which rank runs what when, and `gpubook::sim` runs it (the graders compare with it).

use gpubook::sim::{Costs, Op, Part, ProgramBuilder};
use std::collections::HashMap;

// ANCHOR: bubbles
/// Each rank's bubble when `programs` run with `costs`: the makespan (when the last op of any
/// rank ends) minus the time this rank spent running its own ops.
///
/// `programs[r]` is the list of ops rank r runs, in order; rank r holds stage r of a single
/// pipeline (1F1B and ZB1P: `F`, `B`, `Bz` and `W` ops, chunk 0). Time starts at 0, and an op
/// starts as soon as its rank is free and everything it needs has ended:
/// - `F` of micro-batch m on stage s needs `F` of m on stage s-1 (stage 0 needs nothing);
/// - `B` or `Bz` of m on stage s needs `F` of m on stage s, and the input gradient of m from
///   stage s+1 (its `B` or `Bz`); the last stage starts from the loss, right after its `F`;
/// - `W` of m needs `Bz` of m on the same stage.
///
/// `costs.duration(op)` is how long an op takes.
pub fn bubbles(programs: &[Vec<Op>], costs: &Costs) -> Vec<f64> {
    // SOLUTION
    let stages = programs.len();
    // When each piece of work ended, by (what, stage, micro-batch).
    let mut ended: HashMap<(Part, usize, usize), f64> = HashMap::new();
    let mut next = vec![0; stages]; // each rank's next op
    let mut free = vec![0.0f64; stages]; // when each rank finishes the op it runs now
    let mut busy = vec![0.0f64; stages];
    // Sweep the ranks until none can move: a rank runs ops while their inputs have ended.
    // An op's start, max(rank free, inputs' ends), does not depend on the order of the sweep.
    let mut moved = true;
    while moved {
        moved = false;
        for s in 0..stages {
            while let Some(op) = programs[s].get(next[s]) {
                let mb = op.slots()[0].mb;
                let needs = match op {
                    Op::F(_) if s == 0 => vec![],
                    Op::F(_) => vec![(Part::Forward, s - 1, mb)],
                    Op::B(_) | Op::Bz(_) if s + 1 == stages => vec![(Part::Forward, s, mb)],
                    Op::B(_) | Op::Bz(_) => vec![(Part::Forward, s, mb), (Part::InputGrad, s + 1, mb)],
                    Op::W(_) => vec![(Part::InputGrad, s, mb)],
                    Op::Pair(..) => panic!("overlapped pairs belong to DualPipe, not to single-chunk schedules"),
                };
                let Some(inputs) = needs.iter().map(|k| ended.get(k).copied()).collect::<Option<Vec<f64>>>() else {
                    break; // an input has not been computed yet: try again next sweep
                };
                let start = inputs.into_iter().fold(free[s], f64::max);
                let end = start + costs.duration(op);
                let made: &[Part] = match op {
                    Op::F(_) => &[Part::Forward],
                    Op::B(_) => &[Part::InputGrad, Part::WeightGrad],
                    Op::Bz(_) => &[Part::InputGrad],
                    _ => &[Part::WeightGrad],
                };
                for part in made {
                    ended.insert((*part, s, mb), end);
                }
                busy[s] += end - start;
                free[s] = end;
                next[s] += 1;
                moved = true;
            }
        }
    }
    assert!((0..stages).all(|s| next[s] == programs[s].len()), "the schedule deadlocks");
    let makespan = free.iter().copied().fold(0.0, f64::max);
    busy.iter().map(|b| makespan - b).collect()
    // STUB
    // todo!("time every op (it starts once its rank is free and its inputs have ended), then bubble = makespan - busy")
    // END SOLUTION
}
// ANCHOR_END: bubbles

// ANCHOR: one_f_one_b
/// 1F1B on `pp` stages with `n` micro-batches: one program per rank, rank r holding stage r.
///
/// Rank r warms up with PP-1-r forwards, alternates one forward and one backward (the steady
/// state), and cools down with the backwards left. `ProgramBuilder` numbers the micro-batches:
/// `p.f(0)` is the forward of chunk 0's next micro-batch, `p.b(0)` the next full backward.
pub fn one_f_one_b(pp: usize, n: usize) -> Vec<Vec<Op>> {
    (0..pp)
        .map(|rank| {
            let mut p = ProgramBuilder::new(1);
            // SOLUTION
            // A gradient needs PP-1-rank rounds to come back from the last stage; with fewer
            // micro-batches than that, every forward runs before the first backward.
            let warm_up = (pp - 1 - rank).min(n);
            for _ in 0..warm_up {
                p.f(0);
            }
            for _ in warm_up..n {
                p.f(0).b(0);
            }
            for _ in 0..warm_up {
                p.b(0);
            }
            // STUB
            // todo!("warm-up, steady state, cool-down: p.f(0) for a forward, p.b(0) for a backward");
            // END SOLUTION
            p.finish()
        })
        .collect()
}
// ANCHOR_END: one_f_one_b
