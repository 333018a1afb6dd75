//! ZB1P: the zero-bubble paper's ZB-H1 schedule.
//!
//! 1F1B with each backward split in two. The input gradient (`Bz`) keeps 1F1B's place, because
//! the previous stage waits for it; the weight gradient (`W`), which nobody downstream waits for,
//! moves later. In round `x`, stage `i` of `p` runs `F` of micro-batch `x`, `Bz` of micro-batch
//! `x - (p-1-i)` (as in 1F1B) and `W` of micro-batch `x - (p-1)` (the same lag on every stage).
//! Late stages thus postpone their first `i` weight gradients, which gets their input gradients
//! upstream sooner and fills the cool-down bubbles of early stages. Activations live until `W`,
//! so every stage holds PP of them at its peak: 1F1B's peak (rank 0's), no more.

use crate::error::SimError;
use crate::layout::Layout;
use crate::op::{Op, Slot};
use crate::schedule::{Schedule, ScheduleKind};

pub fn generate(pp: usize, microbatches: usize) -> Result<Schedule, SimError> {
    if pp == 0 || microbatches == 0 {
        return Err(SimError::Shape { schedule: ScheduleKind::Zb1p, pp, microbatches, needs: "PP ≥ 1 and N ≥ 1" });
    }
    let in_range = |x: usize, lag: usize| x.checked_sub(lag).filter(|&m| m < microbatches);
    let programs = (0..pp)
        .map(|stage| {
            let mut ops = Vec::with_capacity(3 * microbatches);
            for x in 0..microbatches + pp - 1 {
                if x < microbatches {
                    ops.push(Op::F(Slot::new(0, x)));
                }
                if let Some(mb) = in_range(x, pp - 1 - stage) {
                    ops.push(Op::Bz(Slot::new(0, mb)));
                }
                if let Some(mb) = in_range(x, pp - 1) {
                    ops.push(Op::W(Slot::new(0, mb)));
                }
            }
            ops
        })
        .collect();
    Ok(Schedule { kind: ScheduleKind::Zb1p, layout: Layout::Linear { ranks: pp, microbatches }, programs })
}

#[cfg(test)]
mod tests {
    #[test]
    fn last_stage_defers_its_weight_gradients() {
        let s = super::generate(4, 6).unwrap();
        assert_eq!(s.rank_notation(0), "F F F F Bz W F Bz W F Bz W Bz W Bz W Bz W");
        assert_eq!(s.rank_notation(3), "F Bz F Bz F Bz F Bz W F Bz W F Bz W W W W");
    }
}
