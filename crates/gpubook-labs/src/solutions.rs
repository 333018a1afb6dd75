//! The chapters' own answers, which the labs measure: a kernel of `solutions/kernels/` is the one
//! copy of a kernel that an exercise asks for and a lab runs (the gate and the layout of
//! `gpubook moe`, chapter 14's warp roles). The learner's crate cannot reach this module.

use gpubook::gpu::Source;
use gpubook::paths::{build_root, relocate};

/// A solution's kernel file, e.g. `"ch14/warp_roles.cu"`, on the machine this runs on.
pub fn kernel(rel: &str) -> Source {
    Source::file(relocate(&build_root().join("solutions").join("kernels").join(rel)))
}
