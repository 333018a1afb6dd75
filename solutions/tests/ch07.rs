//! Chapter 7's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch07.rs).

#[test]
fn three_streams() {
    gpubook::grade::ch07::three_streams(solutions::ch07::three_streams);
}
