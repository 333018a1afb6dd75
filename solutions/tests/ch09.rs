//! Chapter 9's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch09.rs.

gpubook_course::graded!(ch09::zero_copy_combine(solutions::ch09::combine_with_copy, solutions::ch09::combine_zero_copy));
gpubook_course::graded!(ch09::expert_counts(solutions::ch09::expert_counts));
