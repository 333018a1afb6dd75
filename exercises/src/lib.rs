//! gpubook's exercises. Each chapter is a module; its kernels live under `kernels/chNN/`.
//! Edit the functions and kernels marked TODO, then grade them with `cargo test -p exercises`
//! (or `gpubook check <id>`, `gpubook watch`).

// The learner's stubs leave parameters and imports unused until they are filled in.
#![allow(unused_variables, unused_mut, unused_imports, unreachable_code, clippy::diverging_sub_expression)]

pub mod ch01;
pub mod ch02;
pub mod ch03;
pub mod ch04;
pub mod ch07;
pub mod ch08;
pub mod ch09;
pub mod ch10;
pub mod ch11;
pub mod ch12;
pub mod ch13;
