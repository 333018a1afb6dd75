//! The schedule generators, one per module. Each turns (PP, N) into one program per rank.

pub mod dualpipe;
pub mod dualpipev;
pub mod one_f_one_b;
pub mod zb1p;
