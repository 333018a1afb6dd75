//! Chapter 10's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch10.rs.

gpubook::graded!(ch10::bubbles(exercises::ch10::bubbles));
gpubook::graded!(ch10::one_f_one_b(exercises::ch10::one_f_one_b));
