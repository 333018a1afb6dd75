//! Chapter 13's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch13.rs).

#[test]
fn node_limited_gate() {
    gpubook::grade::ch13::node_limited_gate(exercises::ch13::gate_node_limited);
}

#[test]
fn two_hop() {
    gpubook::grade::ch13::two_hop(exercises::ch13::dispatch_two_hop);
}

#[test]
fn traffic() {
    gpubook::grade::ch13::traffic(exercises::ch13::two_hop_traffic);
}
