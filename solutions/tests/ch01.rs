//! Chapter 1's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch01.rs.

gpubook::graded!(ch01::who_am_i(solutions::ch01::who_am_i));
gpubook::graded!(ch01::first_launch(solutions::ch01::first_launch));
