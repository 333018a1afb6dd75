//! Chapter 9's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch09.rs.

gpubook::graded!(ch09::zero_copy_combine(exercises::ch09::combine_with_copy, exercises::ch09::combine_zero_copy));
gpubook::graded!(ch09::expert_counts(exercises::ch09::expert_counts));
