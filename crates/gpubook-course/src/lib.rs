//! gpubook's course: what a learner works through and how it is judged.
//!
//! - [`catalog`]: `exercises.toml`, the one list of chapters and exercises
//! - [`grade`]: the hidden graders, one module per chapter, and the typed report they return
//!   ([`grade::GradeReport`]); `graded!` is how an exercise's test calls one
//! - [`progress`]: the learner's progress record (.gpubook/progress.json)
//! - [`runner`]: the runner's engine: build an exercise's test binary, grade, record; the CLI
//!   and the book's server call it in-process
//! - [`notebook`]: exercises checked from a notebook (`check!`)
//! - [`stubs`]: the learner's files generated from the solutions (the source of truth) and the
//!   catalog, and the drift check

pub mod catalog;
pub mod grade;
pub mod notebook;
pub mod progress;
pub mod runner;
pub mod stubs;
