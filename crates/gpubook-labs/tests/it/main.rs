//! The labs' integration tests, as one test binary. Tests that need a device run on whichever
//! backend `Gpu::new` picks and print SKIPPED, with the reason, when there is none.

mod chunk_pair;
mod ep;
mod fidelity;
mod viz;
