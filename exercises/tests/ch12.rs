//! Chapter 12's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch12.rs).

#[test]
fn gate() {
    gpubook::grade::ch12::gate(exercises::ch12::gate);
}

#[test]
fn layout() {
    gpubook::grade::ch12::layout(exercises::ch12::dispatch_layout);
}

#[test]
fn dispatch() {
    gpubook::grade::ch12::dispatch(exercises::ch12::dispatch);
}

#[test]
fn combine() {
    gpubook::grade::ch12::combine(exercises::ch12::combine);
}
