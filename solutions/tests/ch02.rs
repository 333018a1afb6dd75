//! Chapter 2's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch02.rs.

gpubook_course::graded!(ch02::axpy(solutions::ch02::axpy));
gpubook_course::graded!(ch02::normalize(solutions::ch02::normalize));
gpubook_course::graded!(ch02::fill(solutions::ch02::fill));
gpubook_course::graded!(ch02::smooth(solutions::ch02::smooth));
