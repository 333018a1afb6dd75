//! Chapter 7's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch07.rs.

gpubook_course::graded!(ch07::three_streams(solutions::ch07::three_streams));
