//! Chapter 11's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch11.rs.

gpubook::graded!(ch11::dualpipe(exercises::ch11::dualpipe));
gpubook::graded!(ch11::chunk_pair(exercises::ch11::chunk_pair));
