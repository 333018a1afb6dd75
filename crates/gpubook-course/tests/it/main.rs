//! The course's integration tests, as one test binary: the graders against wrong answers
//! (wrong/, each must fail naming its concept) and notebook checks. Tests that need a device run
//! on whichever backend `Gpu::new` picks and print SKIPPED, with the reason, when there is none.

mod notebook;
mod wrong;
