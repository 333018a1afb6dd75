//! Chapter 9's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch09.rs).

#[test]
fn dualpipe() {
    gpubook::grade::ch09::dualpipe(solutions::ch09::dualpipe);
}

#[test]
fn chunk_pair() {
    gpubook::grade::ch09::chunk_pair(solutions::ch09::chunk_pair);
}
