//! The schedule generators, one per module. Each turns (PP, N) into one program per rank.
//! They are reachable only through [`ScheduleKind::generate`], which graders watch for: writing
//! them is what chapters 10 and 11 ask of the learner. A module of its own is out of reach:
//!
//! ```compile_fail
//! let programs = gpubook_sim::schedules::dualpipe::program(0, 2, 8);
//! ```

mod builder;
mod dualpipe;
mod dualpipev;
mod one_f_one_b;
mod zb1p;

pub use builder::ProgramBuilder;

use crate::error::SimError;
use crate::schedule::{Schedule, ScheduleKind};

impl ScheduleKind {
    /// Builds the schedule for a pipeline of `pp` stages and `microbatches` micro-batches.
    /// DualPipeV folds its `pp` stages onto `pp / 2` devices.
    pub fn generate(&self, pp: usize, microbatches: usize) -> Result<Schedule, SimError> {
        // The generators are what chapters 10 and 11 ask the learner to write.
        crate::reference::called("gpubook::sim::ScheduleKind::generate");
        match self {
            ScheduleKind::OneFOneB => one_f_one_b::generate(pp, microbatches),
            ScheduleKind::Zb1p => zb1p::generate(pp, microbatches),
            ScheduleKind::DualPipe => dualpipe::generate(pp, microbatches),
            ScheduleKind::DualPipeV => dualpipev::generate(pp, microbatches),
        }
    }
}
