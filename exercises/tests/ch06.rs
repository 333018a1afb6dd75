//! Chapter 6's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch06.rs.

gpubook::graded!(ch06::histogram(exercises::ch06::histogram));
gpubook::graded!(ch06::block_scan(exercises::ch06::block_scan));
gpubook::graded!(ch06::scan(exercises::ch06::scan));
gpubook::graded!(ch06::tokens_for_expert(exercises::ch06::tokens_for_expert));
