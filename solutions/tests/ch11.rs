//! Chapter 11's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch11.rs.

gpubook_course::graded!(ch11::dualpipe(solutions::ch11::dualpipe));
gpubook_course::graded!(ch11::chunk_pair(solutions::ch11::chunk_pair));
