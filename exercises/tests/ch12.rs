//! Chapter 12's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch12.rs.

gpubook_course::graded!(ch12::gate(exercises::ch12::gate));
gpubook_course::graded!(ch12::layout(exercises::ch12::dispatch_layout));
gpubook_course::graded!(ch12::dispatch(exercises::ch12::dispatch));
gpubook_course::graded!(ch12::combine(exercises::ch12::combine));
