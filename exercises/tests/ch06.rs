//! Chapter 6's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch06.rs).

#[test]
fn ping_pong() {
    gpubook::grade::ch06::ping_pong(exercises::ch06::ping_pong);
}

#[test]
fn ll_buffers() {
    gpubook::grade::ch06::ll_buffers(exercises::ch06::ll_buffers);
}
