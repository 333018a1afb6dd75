//! Chapter 7's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch07.rs.

gpubook::graded!(ch07::three_streams(solutions::ch07::three_streams));
