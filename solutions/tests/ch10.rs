//! Chapter 10's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch10.rs).

#[test]
fn bubbles() {
    gpubook::grade::ch10::bubbles(solutions::ch10::bubbles);
}

#[test]
fn one_f_one_b() {
    gpubook::grade::ch10::one_f_one_b(solutions::ch10::one_f_one_b);
}
