//! Chapter 8's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch08.rs).

#[test]
fn bubbles() {
    gpubook::grade::ch08::bubbles(solutions::ch08::bubbles);
}

#[test]
fn one_f_one_b() {
    gpubook::grade::ch08::one_f_one_b(solutions::ch08::one_f_one_b);
}
