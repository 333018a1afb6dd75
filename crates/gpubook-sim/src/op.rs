//! What a rank runs: ops, and the units of work (tasks) they are made of.
//!
//! A schedule is written from each rank's point of view: "run the forward of my chunk 0 for the
//! next micro-batch". That is an [`Op`]. The simulator reasons about the whole pipeline instead:
//! "the forward of micro-batch 3 at stage 2 of direction 0". That is a [`Task`]. An op is one or
//! more tasks (a full backward is two, an overlapped pair three), and [`crate::Layout`] maps
//! between the two views.

use std::fmt;

/// A micro-batch on one of the rank's model chunks: the "what" of an op.
///
/// `chunk` is local to the rank. Ranks of 1F1B and ZB1P hold one chunk (0). Ranks of DualPipe
/// and DualPipeV hold two: chunk 0 is the stage in the first half of its pipeline, chunk 1 the
/// stage in the second half, so both ends of the pipeline read the same program.
/// `mb` numbers the micro-batches of that chunk's pipeline (DualPipe numbers each direction from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    pub chunk: usize,
    pub mb: usize,
}

impl Slot {
    pub fn new(chunk: usize, mb: usize) -> Self {
        Slot { chunk, mb }
    }
}

/// One entry of a rank's program. Each rank runs its ops one after another, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Forward.
    F(Slot),
    /// Full backward: the input gradient (sent upstream) and the weight gradient, back to back.
    B(Slot),
    /// Input-gradient-only backward. Its weight gradient is queued for a later [`Op::W`], so the
    /// gradient reaches the previous stage sooner: the zero-bubble idea.
    Bz(Slot),
    /// The weight gradient of an earlier `Bz` (generators pop the rank's queue oldest first).
    W(Slot),
    /// A forward (first slot) and a full backward (second slot) run overlapped: DualPipe hides the
    /// communication of one under the computation of the other. Costs `F&B`, not `F + B`.
    Pair(Slot, Slot),
}

/// The kind of an op without its data: what figures colour by and costs are looked up by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    F,
    B,
    Bz,
    W,
    Pair,
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::F(_) => OpKind::F,
            Op::B(_) => OpKind::B,
            Op::Bz(_) => OpKind::Bz,
            Op::W(_) => OpKind::W,
            Op::Pair(..) => OpKind::Pair,
        }
    }

    /// The slots this op touches (two for a pair: forward first).
    pub fn slots(&self) -> Vec<Slot> {
        match *self {
            Op::F(s) | Op::B(s) | Op::Bz(s) | Op::W(s) => vec![s],
            Op::Pair(f, b) => vec![f, b],
        }
    }

    /// The op in the DualPipe notation: `F0`, `B1`, `B0z`, `W`, `(F0B1)`.
    /// `with_chunk: false` drops the chunk digits, for schedules whose ranks hold one chunk.
    pub fn notation(&self, with_chunk: bool) -> String {
        let c = |s: &Slot| {
            if with_chunk { s.chunk.to_string() } else { String::new() }
        };
        match self {
            Op::F(s) => format!("F{}", c(s)),
            Op::B(s) => format!("B{}", c(s)),
            Op::Bz(s) => format!("B{}z", c(s)),
            Op::W(_) => "W".to_string(),
            Op::Pair(f, b) => format!("(F{}B{})", c(f), c(b)),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.notation(true))
    }
}

/// A stage of one pipeline. DualPipe runs two pipelines (directions) over the same ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StageRef {
    pub pipe: usize,
    pub stage: usize,
}

/// The three pieces of work each (stage, micro-batch) needs exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Forward,
    /// dL/dx: what the previous stage waits for.
    InputGrad,
    /// dL/dW: nobody waits for it but the optimizer, which is why it can be deferred.
    WeightGrad,
}

/// A unit of work in pipeline coordinates: the simulator's view of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Task {
    pub part: Part,
    pub at: StageRef,
    pub mb: usize,
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = match self.part {
            Part::Forward => "forward",
            Part::InputGrad => "input gradient",
            Part::WeightGrad => "weight gradient",
        };
        write!(f, "the {part} of micro-batch {} at stage {} of direction {}", self.mb, self.at.stage, self.at.pipe)
    }
}
