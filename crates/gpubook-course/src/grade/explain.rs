//! What a failed launch most likely means in one exercise. The emulator names the bug it saw
//! (an access out of bounds, a data race, a barrier some threads never reached); the grader
//! knows the exercise, so it can name the idea behind it: "a race here is a missing
//! `__syncthreads` between loading the tile and reading it". Launch limits get the same
//! treatment (an empty grid is a floor division, not a GPU quirk).

use super::report::Failure;
use super::run::Ctx;
use gpubook::cudac::DiagClass;
use gpubook::gpu::{GpuError, Result};

/// The concept to name for each kind of kernel error; `None` keeps the generic one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Explain<'a> {
    /// A load or store outside a buffer (global, shared or dynamic shared).
    pub out_of_bounds: Option<&'a str>,
    /// Two threads touched the same word with no barrier between them, at least one writing.
    pub race: Option<&'a str>,
    /// Some threads of a block (or lanes of a warp) waited at a barrier the others never reached.
    pub divergence: Option<&'a str>,
    /// A read of memory nothing had written.
    pub uninitialized: Option<&'a str>,
    /// A launch configuration the GPU refuses (an empty grid, too many threads a block).
    pub launch_config: Option<&'a str>,
}

impl Explain<'_> {
    /// The concept for `e`, when this exercise has one for its kind.
    pub fn concept_for(&self, e: &GpuError) -> Option<&str> {
        match e {
            GpuError::LaunchConfig { .. } => self.launch_config,
            GpuError::Kernel(d) => match d.class {
                DiagClass::OutOfBounds => self.out_of_bounds,
                DiagClass::Race => self.race,
                DiagClass::BarrierDivergence => self.divergence,
                DiagClass::UninitializedRead => self.uninitialized,
                DiagClass::LaunchConfig => self.launch_config,
                _ => None,
            },
            _ => None,
        }
    }
}

impl Ctx {
    /// Runs the learner's function like [`Ctx::call`]; an error it returns names the concept
    /// `explain` gives for its kind, and `input` says which input showed it.
    pub fn call_explained<T>(&self, input: &str, explain: &Explain<'_>, f: impl FnOnce() -> Result<T>) -> Result<T, Failure> {
        match self.call(|| Ok(f())) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let concept = explain.concept_for(&e).map(str::to_string);
                let failure = Failure::from(e);
                let failure = match concept {
                    Some(c) => failure.concept(c),
                    None => failure,
                };
                Err(failure.or_input(input))
            }
            Err(f) => Err(f.or_input(input)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook::cudac::Diagnostic;

    #[test]
    fn kernel_errors_get_the_exercise_concept() {
        let explain = Explain { race: Some("a missing __syncthreads"), ..Default::default() };
        let race = GpuError::Kernel(Box::new(Diagnostic::new(DiagClass::Race, "read partial[0]")));
        assert_eq!(explain.concept_for(&race), Some("a missing __syncthreads"));
        let oob = GpuError::Kernel(Box::new(Diagnostic::new(DiagClass::OutOfBounds, "wrote c[4]")));
        assert_eq!(explain.concept_for(&oob), None);
    }
}
