//! Chapter 8's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch08.rs).

#[test]
fn ping_pong() {
    gpubook::grade::ch08::ping_pong(exercises::ch08::ping_pong);
}

#[test]
fn ll_buffers() {
    gpubook::grade::ch08::ll_buffers(exercises::ch08::ll_buffers);
}
