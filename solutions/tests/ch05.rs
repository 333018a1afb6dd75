//! Chapter 5's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch05.rs.

gpubook_course::graded!(ch05::gather_rows(solutions::ch05::gather_rows));
gpubook_course::graded!(ch05::row_sums(solutions::ch05::row_sums));
gpubook_course::graded!(ch05::blocks_per_sm(solutions::ch05::blocks_per_sm));
