//! The simulator's integration tests, as one test binary.

mod broken;
mod formula;
mod report;
mod required;
