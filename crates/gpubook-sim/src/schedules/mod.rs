//! The schedule generators, one per module. Each turns (PP, N) into one program per rank.

mod builder;
pub mod dualpipe;
pub mod dualpipev;
pub mod one_f_one_b;
pub mod zb1p;

pub use builder::ProgramBuilder;
