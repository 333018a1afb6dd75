//! Chapter 4's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch04.rs).

#[test]
fn tiled_matmul() {
    gpubook::grade::ch04::tiled_matmul(exercises::ch04::tiled_matmul);
}

#[test]
fn reduce_tree() {
    gpubook::grade::ch04::reduce_tree(exercises::ch04::reduce_tree);
}

#[test]
fn reduce_warp() {
    gpubook::grade::ch04::reduce_warp(exercises::ch04::reduce_warp);
}

#[test]
fn transpose() {
    gpubook::grade::ch04::transpose(exercises::ch04::transpose);
}
