//! Chapter 11's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch11.rs.

gpubook::graded!(ch11::dualpipe(solutions::ch11::dualpipe));
gpubook::graded!(ch11::chunk_pair(solutions::ch11::chunk_pair));
