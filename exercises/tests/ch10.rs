//! Chapter 10's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch10.rs).

#[test]
fn bubbles() {
    gpubook::grade::ch10::bubbles(exercises::ch10::bubbles);
}

#[test]
fn one_f_one_b() {
    gpubook::grade::ch10::one_f_one_b(exercises::ch10::one_f_one_b);
}
