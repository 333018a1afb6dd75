//! The course's integration tests, as one test binary: notebook checks recorded like any other
//! runner's. (Each chapter's wrong answers live beside its graders, src/grade/chNN/wrong.rs.)
//! Tests that need a device run on whichever backend `Gpu::new` picks and print SKIPPED, with
//! the reason, when there is none.

mod notebook;
