//! Where the stages live: which rank holds which stage of which pipeline.
//!
//! Dependencies are between stages ("stage 2's forward needs stage 1's"); programs are written
//! per rank ("my chunk 0"). The layout translates. Three shapes cover the four schedules:
//!
//! ```text
//! Linear (1F1B, ZB1P)   Dual (DualPipe)                     V (DualPipeV)
//! rank 0: s0            rank 0: d0 s0 + d1 s3               device 0: s0 + s3
//! rank 1: s1            rank 1: d0 s1 + d1 s2               device 1: s1 + s2
//! rank 2: s2            rank 2: d0 s2 + d1 s1
//! rank 3: s3            rank 3: d0 s3 + d1 s0
//! ```
//!
//! In the two-chunk layouts, chunk 0 is always the stage in the first half of its pipeline.

use crate::op::StageRef;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One pipeline; stage `r` on rank `r`.
    Linear { ranks: usize, microbatches: usize },
    /// Two pipelines over the same ranks, fed from both ends: direction 0 puts stage `s` on rank
    /// `s`, direction 1 on rank `ranks-1-s`. Each direction carries `microbatches_per_direction`.
    Dual { ranks: usize, microbatches_per_direction: usize },
    /// One pipeline of `2·ranks` stages folded into a V: down the ranks, then back up.
    /// Stages `d` and `2·ranks-1-d` share device `d`, so the turn at the bottom is local.
    V { ranks: usize, microbatches: usize },
}

impl Layout {
    pub fn ranks(&self) -> usize {
        match *self {
            Layout::Linear { ranks, .. } | Layout::Dual { ranks, .. } | Layout::V { ranks, .. } => ranks,
        }
    }

    /// Model chunks per rank. It is also the parameters a rank holds, in units of one stage.
    pub fn chunks(&self) -> usize {
        match self {
            Layout::Linear { .. } => 1,
            Layout::Dual { .. } | Layout::V { .. } => 2,
        }
    }

    /// Number of pipelines (directions).
    pub fn pipes(&self) -> usize {
        match self {
            Layout::Dual { .. } => 2,
            Layout::Linear { .. } | Layout::V { .. } => 1,
        }
    }

    /// Stages per pipeline.
    pub fn stages(&self) -> usize {
        match *self {
            Layout::Linear { ranks, .. } | Layout::Dual { ranks, .. } => ranks,
            Layout::V { ranks, .. } => 2 * ranks,
        }
    }

    /// Micro-batches per pipeline.
    pub fn microbatches(&self) -> usize {
        match *self {
            Layout::Linear { microbatches, .. } | Layout::V { microbatches, .. } => microbatches,
            Layout::Dual { microbatches_per_direction, .. } => microbatches_per_direction,
        }
    }

    /// The stage that `chunk` of `rank` computes.
    pub fn place(&self, rank: usize, chunk: usize) -> StageRef {
        let n = self.ranks();
        debug_assert!(rank < n && chunk < self.chunks());
        match self {
            Layout::Linear { .. } => StageRef { pipe: 0, stage: rank },
            Layout::Dual { .. } => {
                // Chunk 0 is the first-half stage h; ranks in the lower half find it in direction 1.
                let h = rank.min(n - 1 - rank);
                let lower_half = usize::from(rank >= n / 2);
                StageRef { pipe: (chunk + lower_half) % 2, stage: if chunk == 0 { h } else { n - 1 - h } }
            }
            Layout::V { .. } => StageRef { pipe: 0, stage: if chunk == 0 { rank } else { 2 * n - 1 - rank } },
        }
    }

    /// The (rank, chunk) that computes `at`: the inverse of [`Layout::place`].
    pub fn host(&self, at: StageRef) -> (usize, usize) {
        let n = self.ranks();
        match self {
            Layout::Linear { .. } => (at.stage, 0),
            Layout::Dual { .. } => {
                let rank = if at.pipe == 0 { at.stage } else { n - 1 - at.stage };
                (rank, usize::from(at.stage >= n / 2))
            }
            Layout::V { .. } => {
                if at.stage < n {
                    (at.stage, 0)
                } else {
                    (2 * n - 1 - at.stage, 1)
                }
            }
        }
    }

    /// Which way data flows through this chunk: 0 towards higher ranks, 1 towards lower ranks.
    /// Figures shade the two directions differently.
    pub fn direction(&self, rank: usize, chunk: usize) -> usize {
        match self {
            Layout::Linear { .. } => 0,
            Layout::Dual { .. } => self.place(rank, chunk).pipe,
            Layout::V { .. } => chunk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_inverts_place() {
        for layout in [
            Layout::Linear { ranks: 4, microbatches: 1 },
            Layout::Dual { ranks: 6, microbatches_per_direction: 1 },
            Layout::V { ranks: 3, microbatches: 1 },
        ] {
            for r in 0..layout.ranks() {
                for c in 0..layout.chunks() {
                    assert_eq!(layout.host(layout.place(r, c)), (r, c), "{layout:?}");
                }
            }
        }
    }

    #[test]
    fn dualpipe_rank_holds_mirrored_stages() {
        let l = Layout::Dual { ranks: 4, microbatches_per_direction: 4 };
        assert_eq!(l.place(0, 0), StageRef { pipe: 0, stage: 0 });
        assert_eq!(l.place(0, 1), StageRef { pipe: 1, stage: 3 });
        assert_eq!(l.place(3, 0), StageRef { pipe: 1, stage: 0 });
        assert_eq!(l.place(3, 1), StageRef { pipe: 0, stage: 3 });
    }
}
