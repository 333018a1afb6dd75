//! A schedule: one program (a list of ops) per rank, plus the layout that gives them meaning.

use std::fmt;
use std::str::FromStr;

use crate::costs::Costs;
use crate::error::SimError;
use crate::layout::Layout;
use crate::op::Op;

pub use crate::kind::ScheduleKind;

impl ScheduleKind {
    /// The same formula, evaluated. Compare it with the simulated bubble: the formulas assume
    /// cost ratios that real models need not have (see `formula_vs_simulation` in the tests).
    pub fn formula_bubble(&self, pp: usize, c: &Costs) -> f64 {
        let pp = pp as f64;
        match self {
            ScheduleKind::OneFOneB => (pp - 1.0) * (c.f + c.b),
            ScheduleKind::Zb1p => (pp - 1.0) * (c.f + c.b - 2.0 * c.w),
            ScheduleKind::DualPipe | ScheduleKind::DualPipeV => (pp / 2.0 - 1.0) * (c.fb + c.b - 3.0 * c.w),
        }
    }
}

impl FromStr for ScheduleKind {
    type Err = SimError;

    /// Case-insensitive; `-` and `_` are ignored, so `DualPipe-V` and `zb-1p` parse too.
    fn from_str(s: &str) -> Result<Self, SimError> {
        let key: String = s.chars().filter(|c| *c != '-' && *c != '_').collect::<String>().to_ascii_lowercase();
        match key.as_str() {
            "1f1b" => Ok(ScheduleKind::OneFOneB),
            "zb1p" | "zbh1" => Ok(ScheduleKind::Zb1p),
            "dualpipe" => Ok(ScheduleKind::DualPipe),
            "dualpipev" => Ok(ScheduleKind::DualPipeV),
            _ => Err(SimError::UnknownSchedule(s.to_string())),
        }
    }
}

/// One program per rank. Programs say *what* runs in which order; the simulator says *when*.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub kind: ScheduleKind,
    pub layout: Layout,
    /// `programs[rank]`: that rank's ops, in the order it runs them.
    pub programs: Vec<Vec<Op>>,
}

impl Schedule {
    /// Pipeline depth PP: stages per pipeline (for DualPipeV, twice the devices).
    pub fn pp(&self) -> usize {
        self.layout.stages()
    }

    /// Micro-batches over all directions (N).
    pub fn microbatches(&self) -> usize {
        self.layout.microbatches() * self.layout.pipes()
    }

    /// A rank's program in the DualPipe notation, e.g. `F0 F0 F1 B1z W (F0B1)`.
    /// Ranks that hold a single chunk drop the chunk digit: `F F B F B`.
    pub fn rank_notation(&self, rank: usize) -> String {
        let with_chunk = self.layout.chunks() > 1;
        self.programs[rank].iter().map(|op| op.notation(with_chunk)).collect::<Vec<_>>().join(" ")
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in 0..self.programs.len() {
            writeln!(f, "rank {rank}: {}", self.rank_notation(rank))?;
        }
        Ok(())
    }
}
