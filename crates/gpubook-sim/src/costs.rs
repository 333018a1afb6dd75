//! How long each kind of op takes, in any time unit you like.

use crate::error::SimError;
use crate::op::Op;

/// Per-stage costs, in the notation of the DeepSeek-V3 report.
///
/// `b` is the *full* backward of a chunk and includes `w`, so the input-gradient-only backward
/// (`Bz`) takes `b - w`. With F=2, B=4, W=2 a micro-batch costs F+B = 6 per stage, whether its
/// backward runs as one `B` or as `Bz` + `W`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// Forward chunk.
    pub f: f64,
    /// Full backward chunk (input gradient + weight gradient).
    pub b: f64,
    /// Weight-gradient part of the backward.
    pub w: f64,
    /// A forward and a full backward overlapped (`F&B`); `f + b` means overlap gains nothing.
    pub fb: f64,
    /// Point-to-point latency added when an op's input was produced on another rank.
    pub latency: f64,
}

impl Costs {
    pub fn new(f: f64, b: f64, w: f64, fb: f64) -> Self {
        Costs { f, b, w, fb, latency: 0.0 }
    }

    pub fn with_latency(self, latency: f64) -> Self {
        Costs { latency, ..self }
    }

    /// Time `op` occupies its rank.
    pub fn duration(&self, op: &Op) -> f64 {
        match op {
            Op::F(_) => self.f,
            Op::B(_) => self.b,
            Op::Bz(_) => self.b - self.w,
            Op::W(_) => self.w,
            Op::Pair(..) => self.fb,
        }
    }

    /// Rejects costs no schedule could mean: negative, not finite, or W larger than B.
    pub fn check(&self) -> Result<(), SimError> {
        let named = [("F", self.f), ("B", self.b), ("W", self.w), ("F&B", self.fb), ("latency", self.latency)];
        for (name, v) in named {
            if !v.is_finite() || v < 0.0 {
                return Err(SimError::Costs(format!("{name} = {v} must be a finite time ≥ 0")));
            }
        }
        if self.w > self.b {
            return Err(SimError::Costs(format!("W = {} cannot exceed B = {}: B is the full backward and includes W", self.w, self.b)));
        }
        Ok(())
    }
}
