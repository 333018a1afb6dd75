//! Hidden graders, one module per chapter, plus what they share: running the learner's code
//! safely, seeded inputs with the edge sizes every grader tries, comparisons that recognise
//! never-written (poisoned) outputs, trace checks, and failure reports that read like a teacher.
//!
//! A learner's test is one line: `gpubook_course::graded!(ch03::vector_add(exercises::ch03::vector_add));`
//! The grader panics with its report when the exercise is not solved, so the report is the main
//! thing `cargo test -p exercises` prints; the runner reads the typed [`GradeReport`] instead.

pub mod compare;
pub mod concepts;
pub mod explain;
pub mod inputs;
mod report;
mod run;
#[cfg(test)]
mod testing;
pub mod words;

pub use compare::{Tolerance, check_f32, check_values};
pub use explain::Explain;
pub use inputs::{Rng, edge_sizes, sizes};
pub use report::{Failure, GradeReport};
pub use run::{Ctx, finish_test, grade, report_of};

pub mod ch01;
pub mod ch02;
pub mod ch03;
pub mod ch04;
pub mod ch05;
pub mod ch06;
pub mod ch07;
pub mod ch08;
pub mod ch09;
pub mod ch10;
pub mod ch11;
pub mod ch12;
pub mod ch13;
pub mod ch14;
