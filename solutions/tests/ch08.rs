//! Chapter 8's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch08.rs.

gpubook_course::graded!(ch08::ping_pong(solutions::ch08::ping_pong));
gpubook_course::graded!(ch08::ll_buffers(solutions::ch08::ll_buffers));
