//! Chapter 6's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch06.rs.

gpubook_course::graded!(ch06::histogram(exercises::ch06::histogram));
gpubook_course::graded!(ch06::block_scan(exercises::ch06::block_scan));
gpubook_course::graded!(ch06::scan(exercises::ch06::scan));
gpubook_course::graded!(ch06::tokens_for_expert(exercises::ch06::tokens_for_expert));
