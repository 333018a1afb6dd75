//! Chapter 1's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch01.rs.

gpubook_course::graded!(ch01::who_am_i(exercises::ch01::who_am_i));
gpubook_course::graded!(ch01::first_launch(exercises::ch01::first_launch));
