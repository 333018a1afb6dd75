//! Chapter 12's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch12.rs.

gpubook::graded!(ch12::gate(exercises::ch12::gate));
gpubook::graded!(ch12::layout(exercises::ch12::dispatch_layout));
gpubook::graded!(ch12::dispatch(exercises::ch12::dispatch));
gpubook::graded!(ch12::combine(exercises::ch12::combine));
