//! Chapter 12's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch12.rs).

#[test]
fn gate() {
    gpubook::grade::ch12::gate(solutions::ch12::gate);
}

#[test]
fn layout() {
    gpubook::grade::ch12::layout(solutions::ch12::dispatch_layout);
}

#[test]
fn dispatch() {
    gpubook::grade::ch12::dispatch(solutions::ch12::dispatch);
}

#[test]
fn combine() {
    gpubook::grade::ch12::combine(solutions::ch12::combine);
}
