//! Chapter 11's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch11.rs).

#[test]
fn dualpipe() {
    gpubook::grade::ch11::dualpipe(solutions::ch11::dualpipe);
}

#[test]
fn chunk_pair() {
    gpubook::grade::ch11::chunk_pair(solutions::ch11::chunk_pair);
}
