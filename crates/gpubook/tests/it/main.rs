//! The GPU API's integration tests, as one test binary (one link instead of a dozen on a 2-core
//! machine). Tests that need a device run on whichever backend `Gpu::new` picks and print
//! SKIPPED, with the reason, when there is none.

mod access;
mod api;
mod bug_zoo;
mod demos_ch03;
mod demos_ch04;
mod demos_ch07_ch09;
mod demos_ch08;
mod emu_features;
mod globals;
