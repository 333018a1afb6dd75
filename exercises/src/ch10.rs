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
    todo!("time every op (it starts once its rank is free and its inputs have ended), then bubble = makespan - busy")
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
            todo!("warm-up, steady state, cool-down: p.f(0) for a forward, p.b(0) for a backward");
            p.finish()
        })
        .collect()
}
// ANCHOR_END: one_f_one_b
