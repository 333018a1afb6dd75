//! Chapter 2's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch02.rs.

gpubook_course::graded!(ch02::axpy(exercises::ch02::axpy));
gpubook_course::graded!(ch02::normalize(exercises::ch02::normalize));
gpubook_course::graded!(ch02::fill(exercises::ch02::fill));
gpubook_course::graded!(ch02::smooth(exercises::ch02::smooth));
