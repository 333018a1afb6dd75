//! Chapter 4's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch04.rs).

#[test]
fn tiled_matmul() {
    gpubook::grade::ch04::tiled_matmul(solutions::ch04::tiled_matmul);
}

#[test]
fn reduce_tree() {
    gpubook::grade::ch04::reduce_tree(solutions::ch04::reduce_tree);
}

#[test]
fn reduce_warp() {
    gpubook::grade::ch04::reduce_warp(solutions::ch04::reduce_warp);
}

#[test]
fn transpose() {
    gpubook::grade::ch04::transpose(solutions::ch04::transpose);
}
