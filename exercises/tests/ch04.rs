//! Chapter 4's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch04.rs.

gpubook::graded!(ch04::tiled_matmul(exercises::ch04::tiled_matmul));
gpubook::graded!(ch04::reduce_tree(exercises::ch04::reduce_tree));
gpubook::graded!(ch04::reduce_warp(exercises::ch04::reduce_warp));
gpubook::graded!(ch04::transpose(exercises::ch04::transpose));
