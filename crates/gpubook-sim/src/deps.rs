//! The dependency rules: what each piece of work waits for.
//!
//! These five lines are the whole physics of a pipeline schedule:
//! - the forward of stage `s` needs the forward of stage `s-1` (same micro-batch);
//! - the input gradient of stage `s` needs this stage's forward (its saved activations) and the
//!   input gradient of stage `s+1` (the gradient of this stage's output); the last stage starts
//!   the chain from the loss;
//! - the weight gradient needs the input-gradient pass of the same stage (`W` after its `Bz`).
//!
//! "Stage `s-1`" is in the task's own pipeline: DualPipe's direction 1 runs through the ranks
//! in the opposite order, DualPipeV's second arm back up the V. The [`Layout`] knows which.

use crate::layout::Layout;
use crate::op::{Op, Part, Slot, StageRef, Task};

/// The tasks `op` performs when `rank` runs it.
pub fn tasks(layout: &Layout, rank: usize, op: &Op) -> Vec<Task> {
    let task = |part, s: Slot| Task { part, at: layout.place(rank, s.chunk), mb: s.mb };
    match *op {
        Op::F(s) => vec![task(Part::Forward, s)],
        Op::B(s) => vec![task(Part::InputGrad, s), task(Part::WeightGrad, s)],
        Op::Bz(s) => vec![task(Part::InputGrad, s)],
        Op::W(s) => vec![task(Part::WeightGrad, s)],
        Op::Pair(f, b) => vec![task(Part::Forward, f), task(Part::InputGrad, b), task(Part::WeightGrad, b)],
    }
}

/// What `task` needs before it can start. The rules chapter 10's first exercise asks the learner
/// to apply: graders refuse an answer that calls them.
pub fn needs(layout: &Layout, task: &Task) -> Vec<Task> {
    crate::reference::called("gpubook::sim::deps::needs");
    let at = |stage| StageRef { pipe: task.at.pipe, stage };
    let of = |part, at| Task { part, at, mb: task.mb };
    let s = task.at.stage;
    match task.part {
        Part::Forward if s == 0 => vec![],
        Part::Forward => vec![of(Part::Forward, at(s - 1))],
        Part::InputGrad if s + 1 == layout.stages() => vec![of(Part::Forward, task.at)],
        Part::InputGrad => vec![of(Part::Forward, task.at), of(Part::InputGrad, at(s + 1))],
        Part::WeightGrad => vec![of(Part::InputGrad, task.at)],
    }
}

/// What `op` waits for: its tasks' needs, minus what it computes itself (a full `B` computes
/// the input gradient its weight gradient needs).
pub fn op_needs(layout: &Layout, rank: usize, op: &Op) -> Vec<Task> {
    let own = tasks(layout, rank, op);
    let mut out: Vec<Task> = Vec::new();
    for t in &own {
        for n in needs(layout, t) {
            if !own.contains(&n) && !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}
