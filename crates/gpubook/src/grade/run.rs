//! Running a learner's code under a grader: a fresh device (allocations poisoned, so unwritten
//! outputs show), the learner's panics caught and explained (an untouched stub's `todo!()` reads
//! "not yet implemented"), the outcome recorded in the progress file, and a report on failure.

use super::inputs::{Rng, seed};
use super::progress::{Progress, Status};
use super::report::{Failure, Report};
use crate::gpu::Gpu;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Once;

/// What a grader works with.
pub struct Ctx {
    pub gpu: Gpu,
    pub rng: Rng,
    pub seed: u64,
    pub id: String,
}

impl Ctx {
    /// Runs the learner's function, turning a panic or an error into a `Failure`.
    pub fn call<T>(&self, f: impl FnOnce() -> crate::gpu::Result<T>) -> Result<T, Failure> {
        QUIET.with(|q| q.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(f));
        QUIET.with(|q| q.set(false));
        match outcome {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(Failure::from(e)),
            Err(payload) => Err(panic_failure(&self.id, payload.as_ref())),
        }
    }
}

thread_local! {
    /// Set while learner code runs: its panic messages become part of the report instead.
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LOCATION: Cell<Option<String>> = const { Cell::new(None) };
    /// Set by `report_of`: `grade` leaves its report here instead of printing it, and leaves the
    /// progress record alone (a grader tried on a wrong answer is not the learner's attempt).
    static CAPTURED: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Runs `grader` (a grader called on some answer) and returns the report it would print, or
/// `None` when the answer passes. Nothing is printed and the progress record is not touched: this
/// is for testing graders against wrong answers. Any other panic (no device, a grader's own bug)
/// goes on unwinding.
pub fn report_of(grader: impl FnOnce()) -> Option<String> {
    CAPTURED.with(|c| *c.borrow_mut() = Some(None));
    let outcome = catch_unwind(AssertUnwindSafe(grader));
    let report = CAPTURED.with(|c| c.borrow_mut().take()).flatten();
    match (outcome, report) {
        (Ok(()), _) => None,
        (Err(_), Some(report)) => Some(report),
        (Err(payload), None) => resume_unwind(payload),
    }
}

fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) {
                LOCATION.with(|l| l.set(info.location().map(|l| format!("{}:{}", l.file(), l.line()))));
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_failure(id: &str, payload: &(dyn std::any::Any + Send)) -> Failure {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    let at = LOCATION.with(|l| l.take()).unwrap_or_default();
    if msg.starts_with("not yet implemented") {
        let todo = msg.trim_start_matches("not yet implemented").trim_start_matches(':').trim();
        let files = crate::catalog::Catalog::load_default()
            .ok()
            .and_then(|c| c.get(id).map(|e| e.files.iter().map(|f| format!("exercises/{f}")).collect::<Vec<_>>().join(" and ")))
            .unwrap_or_else(|| "this exercise's files".into());
        let mut f = Failure::new(format!("not yet implemented ({at})")).concept(format!("fill in the TODOs in {files}"));
        if !todo.is_empty() {
            f = f.detail(format!("the TODO says: {todo}"));
        }
        f
    } else {
        Failure::new(format!("your code panicked at {at}: {msg}"))
    }
}

/// Only the learner's own code counts towards progress: the grader's closure is generic over the
/// function it grades, so its type name shows whose it is (`exercises::...`, not `solutions::...`
/// or a wrong answer kept as a test).
fn grades_the_learner<B>() -> bool {
    std::any::type_name::<B>().contains("<exercises::")
}

/// Grades exercise `id`: runs `body`, records the outcome, and panics with the report on failure.
pub fn grade<B: FnOnce(&mut Ctx) -> Result<(), Failure>>(id: &str, body: B) {
    install_panic_hook();
    let seed = seed();
    let root = crate::paths::root();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!("\n✗ {id}: no device to grade on: {e}\n  (`gpubook doctor` says what was found)"),
    };
    gpu.set_poison(true);
    let backend = format!("{} ({})", gpu.backend(), gpu.info().name);
    let mut ctx = Ctx { gpu, rng: Rng::new(seed), seed, id: id.to_string() };
    let result = body(&mut ctx);
    let status = if result.is_ok() { Status::Passed } else { Status::Failing };
    let capturing = CAPTURED.with(|c| c.borrow().is_some());
    if !capturing && grades_the_learner::<B>() {
        let _ = Progress::update(&root, id, |e| {
            e.attempts += 1;
            if e.status != Status::Passed || status == Status::Passed {
                e.status = status;
            }
        });
    }
    if let Err(failure) = result {
        let report = Report { id, failure: &failure, seed, backend }.to_string();
        if capturing {
            CAPTURED.with(|c| *c.borrow_mut() = Some(Some(report)));
        } else {
            // The report goes to stdout, which libtest shows under the failing test; unwinding
            // without the panic hook keeps "thread panicked at" lines and backtraces out of it.
            println!("{report}");
        }
        resume_unwind(Box::new(format!("{id} is not solved yet")));
    }
}
