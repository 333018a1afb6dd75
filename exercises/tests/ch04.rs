//! Chapter 4's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch04.rs.

gpubook_course::graded!(ch04::tiled_matmul(exercises::ch04::tiled_matmul));
gpubook_course::graded!(ch04::reduce_tree(exercises::ch04::reduce_tree));
gpubook_course::graded!(ch04::reduce_warp(exercises::ch04::reduce_warp));
gpubook_course::graded!(ch04::transpose(exercises::ch04::transpose));
