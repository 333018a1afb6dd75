//! The graders against plausible wrong answers, one module per pair of chapters: each wrong
//! answer must fail, and its report must name the concept the mistake is about. A grader that
//! cannot fail is a bug.

mod ch01_ch02;
mod ch03_ch04;
mod ch05_ch06;
mod ch07_ch09;
mod ch10_ch11;
mod ch12_ch13;
mod ch14;
mod concepts_ch07_ch11;
mod host_answers;
mod skipped_concepts;
