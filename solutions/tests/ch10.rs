//! Chapter 10's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch10.rs.

gpubook_course::graded!(ch10::bubbles(solutions::ch10::bubbles));
gpubook_course::graded!(ch10::one_f_one_b(solutions::ch10::one_f_one_b));
