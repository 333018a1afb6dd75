//! DualPipeV: DualPipe folded in half.
//!
//! DualPipe's ranks `r` and `PP-1-r` run the same program on mirrored stages. DualPipeV keeps
//! one of each mirrored couple: a single pipeline of PP stages is folded into a V over PP/2
//! devices, device `d` holding stage `d` (chunk 0, on the way down) and stage `PP-1-d`
//! (chunk 1, on the way back up). All N micro-batches enter at device 0, turn at the bottom of
//! the V without leaving device PP/2-1, and finish at device 0. Each device runs exactly the
//! DualPipe program of its upper-half twin, with M = N micro-batches per chunk, so it keeps
//! DualPipe's bubble on half the devices and needs N ≥ PP (that is, N ≥ 2 · devices).

use crate::error::SimError;
use crate::layout::Layout;
use crate::schedule::{Schedule, ScheduleKind};
use crate::schedules::dualpipe;

/// `pp` is the number of stages; the schedule runs on `pp / 2` devices.
pub fn generate(pp: usize, microbatches: usize) -> Result<Schedule, SimError> {
    if pp < 2 || !pp.is_multiple_of(2) || microbatches < pp {
        return Err(SimError::Shape {
            schedule: ScheduleKind::DualPipeV,
            pp,
            microbatches,
            needs: "an even PP ≥ 2 (on PP/2 devices) and N ≥ PP",
        });
    }
    let devices = pp / 2;
    let programs = (0..devices).map(|d| dualpipe::program(d, devices, microbatches)).collect();
    Ok(Schedule { kind: ScheduleKind::DualPipeV, layout: Layout::V { ranks: devices, microbatches }, programs })
}
