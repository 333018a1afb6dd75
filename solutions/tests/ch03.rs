//! Chapter 3's exercises, graded: one line each, generated from exercises.toml by
//! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/ch03.rs.

gpubook_course::graded!(ch03::vector_add(solutions::ch03::vector_add));
gpubook_course::graded!(ch03::bias_relu(solutions::ch03::bias_relu));
gpubook_course::graded!(ch03::matrix_add(solutions::ch03::matrix_add));
gpubook_course::graded!(ch03::rgb_to_gray(solutions::ch03::rgb_to_gray));
gpubook_course::graded!(ch03::blur(solutions::ch03::blur));
