//! Chapter 3's exercises, graded (the checks live in gpubook's src/grade/ch03.rs).

#[test]
fn vector_add() {
    gpubook::grade::ch03::vector_add(exercises::ch03::vector_add);
}
