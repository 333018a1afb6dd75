//! Chapter 2's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch02.rs).

#[test]
fn axpy() {
    gpubook::grade::ch02::axpy(exercises::ch02::axpy);
}

#[test]
fn normalize() {
    gpubook::grade::ch02::normalize(exercises::ch02::normalize);
}

#[test]
fn fill() {
    gpubook::grade::ch02::fill(exercises::ch02::fill);
}

#[test]
fn smooth() {
    gpubook::grade::ch02::smooth(exercises::ch02::smooth);
}
