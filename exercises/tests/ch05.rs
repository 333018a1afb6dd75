//! Chapter 5's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch05.rs).

#[test]
fn three_streams() {
    gpubook::grade::ch05::three_streams(exercises::ch05::three_streams);
}
