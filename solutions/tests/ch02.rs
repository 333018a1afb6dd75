//! Chapter 2's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch02.rs).

#[test]
fn axpy() {
    gpubook::grade::ch02::axpy(solutions::ch02::axpy);
}

#[test]
fn normalize() {
    gpubook::grade::ch02::normalize(solutions::ch02::normalize);
}

#[test]
fn fill() {
    gpubook::grade::ch02::fill(solutions::ch02::fill);
}

#[test]
fn smooth() {
    gpubook::grade::ch02::smooth(solutions::ch02::smooth);
}
