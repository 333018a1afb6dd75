//! 1F1B: one forward, one backward.
//!
//! Think of the run as rounds. In round `x`, stage `i` of `p` runs the forward of micro-batch
//! `x`, then the backward of micro-batch `x - (p-1-i)`, skipping whichever does not exist.
//! The offset `p-1-i` is how many rounds a gradient needs to come back from the last stage,
//! and it is also the familiar three phases: `p-1-i` forwards alone (warm-up), forward and
//! backward in turn (steady state), `p-1-i` backwards alone (cool-down). Stage `i` never holds
//! more than `p-i` activations, so rank 0 holds PP: the memory bound 1F1B is known for.

use crate::error::SimError;
use crate::layout::Layout;
use crate::op::{Op, Slot};
use crate::schedule::{Schedule, ScheduleKind};

pub fn generate(pp: usize, microbatches: usize) -> Result<Schedule, SimError> {
    if pp == 0 || microbatches == 0 {
        return Err(SimError::Shape { schedule: ScheduleKind::OneFOneB, pp, microbatches, needs: "PP ≥ 1 and N ≥ 1" });
    }
    let programs = (0..pp)
        .map(|stage| {
            let lag = pp - 1 - stage;
            let mut ops = Vec::with_capacity(2 * microbatches);
            for x in 0..microbatches + lag {
                if x < microbatches {
                    ops.push(Op::F(Slot::new(0, x)));
                }
                if let Some(mb) = x.checked_sub(lag).filter(|&m| m < microbatches) {
                    ops.push(Op::B(Slot::new(0, mb)));
                }
            }
            ops
        })
        .collect();
    Ok(Schedule { kind: ScheduleKind::OneFOneB, layout: Layout::Linear { ranks: pp, microbatches }, programs })
}

#[cfg(test)]
mod tests {
    #[test]
    fn warm_up_steady_cool_down() {
        let s = super::generate(4, 6).unwrap();
        assert_eq!(s.rank_notation(0), "F F F F B F B F B B B B");
        assert_eq!(s.rank_notation(3), "F B F B F B F B F B F B");
    }
}
