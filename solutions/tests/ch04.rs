//! Chapter 4's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch04.rs.

gpubook_course::graded!(ch04::tiled_matmul(solutions::ch04::tiled_matmul));
gpubook_course::graded!(ch04::reduce_tree(solutions::ch04::reduce_tree));
gpubook_course::graded!(ch04::reduce_warp(solutions::ch04::reduce_warp));
gpubook_course::graded!(ch04::transpose(solutions::ch04::transpose));
