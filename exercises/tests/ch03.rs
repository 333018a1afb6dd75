//! Chapter 3's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch03.rs).

#[test]
fn vector_add() {
    gpubook::grade::ch03::vector_add(exercises::ch03::vector_add);
}

#[test]
fn bias_relu() {
    gpubook::grade::ch03::bias_relu(exercises::ch03::bias_relu);
}

#[test]
fn matrix_add() {
    gpubook::grade::ch03::matrix_add(exercises::ch03::matrix_add);
}

#[test]
fn rgb_to_gray() {
    gpubook::grade::ch03::rgb_to_gray(exercises::ch03::rgb_to_gray);
}

#[test]
fn blur() {
    gpubook::grade::ch03::blur(exercises::ch03::blur);
}
