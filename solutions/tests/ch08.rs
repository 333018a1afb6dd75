//! Chapter 8's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch08.rs.

gpubook::graded!(ch08::ping_pong(solutions::ch08::ping_pong));
gpubook::graded!(ch08::ll_buffers(solutions::ch08::ll_buffers));
