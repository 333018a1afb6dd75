//! Chapter 14's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch14.rs.

gpubook_course::graded!(ch14::channel_ring(exercises::ch14::channel_ring));
gpubook_course::graded!(ch14::dispatch_roles(exercises::ch14::dispatch_roles));
