//! DualPipe: micro-batches fed from both ends of the pipeline.
//!
//! Rank `r` of PP holds stage `r` of direction 0 and stage `PP-1-r` of direction 1; N/2
//! micro-batches enter at each end. In the steady state each rank alternates overlapped pairs
//! `(F0B1) (F1B0)`: a forward of one direction next to a backward of the other, so that one's
//! communication (MoE all-to-all, pipeline sends) hides under the other's computation. Backwards
//! near the edges run input-gradient-only (`Bz`) and their weight gradients (`W`) fill bubbles.
//!
//! The program is written in local directions: chunk 0 is the rank's stage in the first half of
//! its pipeline (distance `h = min(r, PP-1-r)` from the entry), chunk 1 the other. Ranks `r` and
//! `PP-1-r` therefore run the very same program, mirrored. [`program`] is that program; it is
//! derived from the eight steps below (H = PP/2, M = N/2 micro-batches per direction).

use crate::error::SimError;
use crate::layout::Layout;
use crate::op::Op;
use crate::schedule::{Schedule, ScheduleKind};
use crate::schedules::ProgramBuilder;

pub fn generate(pp: usize, microbatches: usize) -> Result<Schedule, SimError> {
    if pp < 2 || !pp.is_multiple_of(2) || !microbatches.is_multiple_of(2) || microbatches < 2 * pp {
        return Err(SimError::Shape {
            schedule: ScheduleKind::DualPipe, pp, microbatches, needs: "an even PP ≥ 2 and an even N ≥ 2·PP"
        });
    }
    let per_direction = microbatches / 2;
    let programs = (0..pp).map(|rank| program(rank.min(pp - 1 - rank), pp / 2, per_direction)).collect();
    Ok(Schedule { kind: ScheduleKind::DualPipe, layout: Layout::Dual { ranks: pp, microbatches_per_direction: per_direction }, programs })
}

/// The program of a rank at distance `h` from its pipeline's entry, with `half` = PP/2 and
/// `m` micro-batches per direction (`m ≥ 2·half`). DualPipeV reuses it unchanged.
///
/// 1. `2(half-h-1)` × `F0`: run ahead while direction 1's first micro-batch travels here.
/// 2. `h+1` × `F0 F1`: the first direction-1 forwards arrive; interleave them.
/// 3. `half-h-1` × `B1z W F1`: the first backwards. Split, so that the input gradient leaves
///    for the previous stage before the weight gradient is computed.
/// 4. `m-2·half+h+1` × `(F0B1) (F1B0)`: the steady state, all overlapped. The two middle ranks
///    (`h = half-1`) run their first pair as `F0` then `B1`, not overlapped: the forward's
///    output then leaves after F instead of after the whole pair. Without communication cost
///    the pair would be cheaper (it saves F+B-F&B); once sends take time the split wins
///    (PP=8, N=20, costs 2,4,2,5, latency 1: makespan 145 split, 146 paired).
/// 5. `half-h-1` × `B1 (F1B0)`: direction 0 has no forwards left.
/// 6. `h+1` × `B1 B0`: no forwards left; the second half of these ops run as `Bz`, deferring
///    their weight gradients.
/// 7. `half-h-1` × `W B0z`: weight gradients fill the wait for the last direction-0 gradients.
/// 8. `h+1` × `W`: drain the queue.
pub fn program(h: usize, half: usize, m: usize) -> Vec<Op> {
    assert!(h < half && m >= 2 * half, "DualPipe program needs h < PP/2 and M ≥ PP");
    let edge = half - h - 1; // how far this rank is from the middle of the pipeline
    let mut p = ProgramBuilder::new(2);
    for _ in 0..2 * edge {
        p.f(0);
    }
    for _ in 0..h + 1 {
        p.f(0);
        p.f(1);
    }
    for _ in 0..edge {
        p.bz(1);
        p.w();
        p.f(1);
    }
    for i in 0..m - 2 * half + h + 1 {
        if i == 0 && h == half - 1 {
            p.f(0);
            p.b(1);
        } else {
            p.pair(0, 1);
        }
        p.pair(1, 0);
    }
    for _ in 0..edge {
        p.b(1);
        p.pair(1, 0);
    }
    for i in 0..2 * (h + 1) {
        let chunk = if i % 2 == 0 { 1 } else { 0 };
        if i < h + 1 {
            p.b(chunk);
        } else {
            p.bz(chunk);
        }
    }
    for _ in 0..edge {
        p.w();
        p.bz(0);
    }
    for _ in 0..h + 1 {
        p.w();
    }
    debug_assert!(p.pending_w() == 0 && p.forwards() == [m, m] && p.backwards() == [m, m]);
    p.finish()
}
