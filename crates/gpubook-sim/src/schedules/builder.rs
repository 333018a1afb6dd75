//! Writing a rank's program without counting micro-batches by hand.

use std::collections::VecDeque;

use crate::op::{Op, Slot};

/// Appends ops to one rank's program and numbers their micro-batches.
///
/// Every schedule here runs each chunk's forwards in micro-batch order, and its backwards too,
/// so a program only has to say *which kind of op on which chunk* comes next; the builder
/// hands out the numbers. A `W` takes the oldest weight gradient that a `Bz` left behind.
///
/// ```
/// use gpubook_sim::ProgramBuilder;
///
/// let mut p = ProgramBuilder::new(2);
/// p.f(0).f(0).f(1).bz(1).w().pair(0, 1);
/// let text: Vec<String> = p.ops().iter().map(|op| op.to_string()).collect();
/// assert_eq!(text, ["F0", "F0", "F1", "B1z", "W", "(F0B1)"]);
/// assert_eq!(p.finish()[5].slots()[0].mb, 2); // the third forward of chunk 0
/// ```
#[derive(Clone, Debug, Default)]
pub struct ProgramBuilder {
    ops: Vec<Op>,
    next_f: Vec<usize>,
    next_b: Vec<usize>,
    queued_w: VecDeque<Slot>,
}

impl ProgramBuilder {
    /// A builder for a rank that holds `chunks` model chunks (1 for 1F1B and ZB1P, 2 for
    /// DualPipe and DualPipeV).
    pub fn new(chunks: usize) -> Self {
        ProgramBuilder { ops: Vec::new(), next_f: vec![0; chunks], next_b: vec![0; chunks], queued_w: VecDeque::new() }
    }

    fn take(next: &mut [usize], chunk: usize) -> Slot {
        assert!(chunk < next.len(), "chunk {chunk} does not exist: this rank holds {} chunk(s)", next.len());
        next[chunk] += 1;
        Slot::new(chunk, next[chunk] - 1)
    }

    /// The forward of `chunk`'s next micro-batch.
    pub fn f(&mut self, chunk: usize) -> &mut Self {
        let s = Self::take(&mut self.next_f, chunk);
        self.ops.push(Op::F(s));
        self
    }

    /// The full backward (input and weight gradients) of `chunk`'s next micro-batch.
    pub fn b(&mut self, chunk: usize) -> &mut Self {
        let s = Self::take(&mut self.next_b, chunk);
        self.ops.push(Op::B(s));
        self
    }

    /// The input-gradient half of `chunk`'s next backward; its weight gradient waits for a `w()`.
    pub fn bz(&mut self, chunk: usize) -> &mut Self {
        let s = Self::take(&mut self.next_b, chunk);
        self.queued_w.push_back(s);
        self.ops.push(Op::Bz(s));
        self
    }

    /// The oldest weight gradient still owed by a `bz`.
    ///
    /// # Panics
    /// When no `bz` is waiting for its `W`: a weight gradient needs its input-gradient pass first.
    pub fn w(&mut self) -> &mut Self {
        let s = self.queued_w.pop_front().expect("W with no Bz before it: a weight gradient follows its input-gradient pass (Bz)");
        self.ops.push(Op::W(s));
        self
    }

    /// The forward of `f_chunk` and the full backward of `b_chunk`, overlapped: `(F0B1)`.
    pub fn pair(&mut self, f_chunk: usize, b_chunk: usize) -> &mut Self {
        let f = Self::take(&mut self.next_f, f_chunk);
        let b = Self::take(&mut self.next_b, b_chunk);
        self.ops.push(Op::Pair(f, b));
        self
    }

    /// The program so far.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Forwards issued so far per chunk.
    pub fn forwards(&self) -> &[usize] {
        &self.next_f
    }

    /// Backwards (full or `Bz`) issued so far per chunk.
    pub fn backwards(&self) -> &[usize] {
        &self.next_b
    }

    /// Weight gradients that `bz` left and no `w` has taken yet.
    pub fn pending_w(&self) -> usize {
        self.queued_w.len()
    }

    /// The finished program.
    pub fn finish(self) -> Vec<Op> {
        self.ops
    }
}
