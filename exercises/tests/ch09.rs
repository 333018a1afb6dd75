//! Chapter 9's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch09.rs.

gpubook_course::graded!(ch09::zero_copy_combine(exercises::ch09::combine_with_copy, exercises::ch09::combine_zero_copy));
gpubook_course::graded!(ch09::expert_counts(exercises::ch09::expert_counts));
