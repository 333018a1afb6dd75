//! Reference code, marked so that graders can refuse an answer that calls it: see
//! [`gpubook_sim::reference`], which holds the one record for every crate.

pub use gpubook_sim::reference::{called, grader_thread, watch};
