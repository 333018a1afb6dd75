//! Chapter 11's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch11.rs.

gpubook_course::graded!(ch11::dualpipe(exercises::ch11::dualpipe));
gpubook_course::graded!(ch11::chunk_pair(exercises::ch11::chunk_pair));
