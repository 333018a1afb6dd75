//! Chapter 13's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch13.rs.

gpubook_course::graded!(ch13::node_limited_gate(exercises::ch13::gate_node_limited));
gpubook_course::graded!(ch13::two_hop(exercises::ch13::dispatch_two_hop));
gpubook_course::graded!(ch13::traffic(exercises::ch13::two_hop_traffic));
