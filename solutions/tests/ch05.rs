//! Chapter 5's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in gpubook's crates/gpubook/src/grade/ch05.rs.

gpubook::graded!(ch05::gather_rows(solutions::ch05::gather_rows));
gpubook::graded!(ch05::row_sums(solutions::ch05::row_sums));
gpubook::graded!(ch05::blocks_per_sm(solutions::ch05::blocks_per_sm));
