//! Chapter 4's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch04.rs.

gpubook::graded!(ch04::tiled_matmul(solutions::ch04::tiled_matmul));
gpubook::graded!(ch04::reduce_tree(solutions::ch04::reduce_tree));
gpubook::graded!(ch04::reduce_warp(solutions::ch04::reduce_warp));
gpubook::graded!(ch04::transpose(solutions::ch04::transpose));
