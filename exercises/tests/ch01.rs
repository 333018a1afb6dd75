//! Chapter 1's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch01.rs).

#[test]
fn who_am_i() {
    gpubook::grade::ch01::who_am_i(exercises::ch01::who_am_i);
}

#[test]
fn first_launch() {
    gpubook::grade::ch01::first_launch(exercises::ch01::first_launch);
}
