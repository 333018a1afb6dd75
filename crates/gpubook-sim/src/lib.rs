//! Pipeline-parallel schedules and a discrete-event simulator, for the book's DualPipe chapter.
//!
//! ```text
//! ScheduleKind::generate(pp, n) ──► Schedule (one program of Ops per rank)
//!                                       │  simulate(&schedule, &costs)
//!                                       ▼
//!                                   SimResult (spans, makespan, bubbles, activations)
//!                                       │               │
//!                                 report::run_report   gantt::gantt_svg
//! ```
//!
//! - [`op`]: the ops a rank runs (`F`, `B`, `Bz`, `W`, overlapped pairs) and their notation.
//! - [`layout`]: which rank holds which stage; [`deps`]: what each piece of work waits for.
//! - [`schedules`]: one generator per schedule (1F1B, ZB1P, DualPipe, DualPipeV).
//! - [`sim`]: the simulator and the definitions of its numbers.
//! - [`report`]: the `gpubook pipeline` text and the comparison table; [`gantt`]: the figure.
//!
//! ```
//! use gpubook_sim::{Costs, ScheduleKind, simulate};
//!
//! let schedule = ScheduleKind::DualPipe.generate(4, 8)?; // PP = 4 stages, N = 8 micro-batches
//! assert_eq!(
//!     schedule.rank_notation(0),
//!     "F0 F0 F0 F1 B1z W F1 (F0B1) (F1B0) B1 (F1B0) B1 B0z W B0z W"
//! );
//! let result = simulate(&schedule, &Costs::new(2.0, 4.0, 2.0, 5.0))?; // F, B, W, F&B
//! assert_eq!((result.makespan, result.bubble), (48.0, 3.0));
//! assert_eq!(result.peak_activations, [5, 5, 5, 5]); // PP + 1 on every rank
//! # Ok::<(), gpubook_sim::SimError>(())
//! ```

pub mod costs;
pub mod deps;
pub mod error;
pub mod gantt;
mod kind;
pub mod layout;
pub mod op;
pub mod reference;
pub mod report;
pub mod schedule;
pub mod schedules;
pub mod sim;

pub use costs::Costs;
pub use error::{Need, SimError, Wait};
pub use gantt::gantt_svg;
pub use layout::Layout;
pub use op::{Op, OpKind, Part, Slot, StageRef, Task};
pub use report::{Comparison, PipelineArgs, compare, comparison_table, run_report};
pub use schedule::{Schedule, ScheduleKind};
pub use schedules::ProgramBuilder;
pub use sim::{SimResult, Span, simulate};
