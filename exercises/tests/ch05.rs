//! Chapter 5's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch05.rs.

gpubook_course::graded!(ch05::gather_rows(exercises::ch05::gather_rows));
gpubook_course::graded!(ch05::row_sums(exercises::ch05::row_sums));
gpubook_course::graded!(ch05::blocks_per_sm(exercises::ch05::blocks_per_sm));
