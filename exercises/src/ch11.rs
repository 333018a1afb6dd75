//! Chapter 11: DualPipe. The schedule, and the overlap inside one of its chunk pairs.

use gpubook::chunk_pair::{ChunkPair, Step};
use gpubook::gpu::{Result, Stream};
use gpubook::sim::{Op, ProgramBuilder};

// ANCHOR: dualpipe
/// DualPipe on `pp` ranks (even) with `n` micro-batches (even, at least 2·PP), N/2 of them
/// entering at each end: one program per rank.
///
/// Rank r holds stage r of direction 0 and stage PP-1-r of direction 1. Chunk 0 is whichever of
/// the two lies in the first half of its own pipeline, so ranks r and PP-1-r run the same
/// program; it depends only on h = min(r, PP-1-r), the rank's distance from its entry. With
/// half = PP/2, edge = half-h-1 and M = N/2, the program has eight phases (the chapter explains
/// each): see `dualpipe_rank`.
pub fn dualpipe(pp: usize, n: usize) -> Vec<Vec<Op>> {
    todo!("one program per rank: which h does rank r have?")
}

/// The program of a rank at distance `h` from its pipeline's entry, for a pipeline of
/// `2·half` stages and `m` micro-batches per direction.
///
/// | phase | repeat | ops |
/// |---|---|---|
/// | 1 warm-up | 2·edge | `F0` |
/// | 2 both directions arrive | h+1 | `F0 F1` |
/// | 3 first backwards, split | edge | `B1z W F1` |
/// | 4 steady state | m-2·half+h+1 | `(F0B1) (F1B0)`; the middle ranks (edge = 0) run their first `(F0B1)` as `F0 B1` |
/// | 5 direction 0 out of forwards | edge | `B1 (F1B0)` |
/// | 6 backwards only | h+1 | `B1 B0`, the last h+1 of these 2(h+1) ops as `Bz` |
/// | 7 weight gradients fill the wait | edge | `W B0z` |
/// | 8 drain | h+1 | `W` |
pub fn dualpipe_rank(h: usize, half: usize, m: usize) -> Vec<Op> {
    assert!(h < half, "h = {h} is not below PP/2 = {half}: h is the distance from the nearer end, min(rank, PP-1-rank)");
    let edge = half - h - 1;
    let mut p = ProgramBuilder::new(2);
    todo!("the eight phases, with p.f(chunk), p.b(chunk), p.bz(chunk), p.w() and p.pair(f_chunk, b_chunk)");
    p.finish()
}
// ANCHOR_END: dualpipe

// ANCHOR: chunk_pair
/// Issues one chunk pair: computations on `compute`, communications on `comm`, in an order
/// that hides each communication of one chunk under a computation of the other.
///
/// `pair.run(step, stream)` issues one step and waits for nothing; `step.after()` names the
/// step whose output it reads. Automatic synchronisation is off, so a step that reads what the
/// other stream wrote must wait for an event (`stream.record_event()?`, `stream.wait(&event)?`).
pub fn chunk_pair(pair: &mut ChunkPair, compute: &Stream, comm: &Stream) -> Result<()> {
    todo!("issue the eight steps with pair.run(step, stream), ordered across the two streams with events")
}
// ANCHOR_END: chunk_pair
