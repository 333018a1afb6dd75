//! Everything that can go wrong, as values: a broken schedule is reported, never simulated.

use std::fmt;

use crate::kind::ScheduleKind;
use crate::op::{Op, Task};

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The schedule cannot be built for this pipeline depth and micro-batch count.
    #[error("{schedule} needs {needs} (got PP = {pp}, N = {microbatches})")]
    Shape { schedule: ScheduleKind, pp: usize, microbatches: usize, needs: &'static str },
    #[error("invalid costs: {0}")]
    Costs(String),
    #[error("unknown schedule `{0}` (expected 1f1b, zb1p, dualpipe or dualpipev)")]
    UnknownSchedule(String),
    /// An op names a chunk or micro-batch that does not exist.
    #[error("rank {rank} op #{index} `{op}`: {problem}")]
    BadOp { rank: usize, index: usize, op: Op, problem: String },
    /// The same work appears twice.
    #[error(
        "{task} is scheduled twice: rank {} op #{} and rank {} op #{}",
        first.0, first.1, second.0, second.1
    )]
    Duplicate { task: Task, first: (usize, usize), second: (usize, usize) },
    /// Work that no rank runs and no other op waits for (a missing `W`, say).
    #[error("{task} is never run (it belongs on rank {rank})")]
    Missing { task: Task, rank: usize },
    /// No rank can start its next op: each waits for something that will never come.
    #[error("deadlock at t = {time}: no rank can start its next op\n{}", list(waits))]
    Deadlock { time: f64, waits: Vec<Wait> },
}

fn list(waits: &[Wait]) -> String {
    waits.iter().map(|w| format!("  {w}")).collect::<Vec<_>>().join("\n")
}

/// A rank stuck at op `index` of its program, and what that op waits for.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    pub rank: usize,
    pub index: usize,
    pub op: Op,
    pub needs: Vec<Need>,
}

/// One missing input of a stuck op, and where (if anywhere) it is scheduled.
#[derive(Clone, Debug, PartialEq)]
pub struct Need {
    pub task: Task,
    /// `(rank, op index)` of the op that would produce it; `None` when no rank runs it.
    pub scheduled_at: Option<(usize, usize)>,
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mbs: Vec<String> = self.op.slots().iter().map(|s| s.mb.to_string()).collect();
        write!(f, "rank {} op #{} `{}` (micro-batch {}) waits for ", self.rank, self.index, self.op, mbs.join(" and "))?;
        for (i, need) in self.needs.iter().enumerate() {
            if i > 0 {
                f.write_str(" and ")?;
            }
            write!(f, "{}", need.task)?;
            match need.scheduled_at {
                None => f.write_str(", which no rank runs (a missing op)")?,
                Some((rank, index)) if rank == self.rank && index > self.index => {
                    write!(f, ", which this rank only runs later, at op #{index} (the order is wrong)")?
                }
                Some((rank, index)) => write!(f, ", which rank {rank} has at op #{index}")?,
            }
        }
        Ok(())
    }
}
