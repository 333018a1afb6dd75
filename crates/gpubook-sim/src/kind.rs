//! The four schedules by name: what the rest of the crate (errors included) can name without
//! depending on how a schedule is built. `schedules::` builds them; `schedule.rs` parses the
//! names and evaluates the bubble formulas.

use std::fmt;

/// The four schedules of the DeepSeek-V3 report's comparison table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScheduleKind {
    OneFOneB,
    Zb1p,
    DualPipe,
    DualPipeV,
}

impl ScheduleKind {
    pub const ALL: [ScheduleKind; 4] = [ScheduleKind::OneFOneB, ScheduleKind::Zb1p, ScheduleKind::DualPipe, ScheduleKind::DualPipeV];

    pub fn name(&self) -> &'static str {
        match self {
            ScheduleKind::OneFOneB => "1F1B",
            ScheduleKind::Zb1p => "ZB1P",
            ScheduleKind::DualPipe => "DualPipe",
            ScheduleKind::DualPipeV => "DualPipeV",
        }
    }

    /// Devices the schedule runs on for a pipeline of `pp` stages.
    pub fn devices(&self, pp: usize) -> usize {
        match self {
            ScheduleKind::DualPipeV => pp / 2,
            _ => pp,
        }
    }

    /// The bubble formula of the DeepSeek-V3 report's table, as text.
    pub fn bubble_formula(&self) -> &'static str {
        match self {
            ScheduleKind::OneFOneB => "(PP-1)(F+B)",
            ScheduleKind::Zb1p => "(PP-1)(F+B-2W)",
            ScheduleKind::DualPipe | ScheduleKind::DualPipeV => "(PP/2-1)(F&B+B-3W)",
        }
    }
}

impl fmt::Display for ScheduleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
