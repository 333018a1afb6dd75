//! The `gpubook` binary end to end, as one test binary.

mod run;
mod runner;
