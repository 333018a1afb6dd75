//! Running a learner's code under a grader: a fresh device (allocations poisoned, so unwritten
//! outputs show), the learner's panics caught and explained (an untouched stub's `todo!()` reads
//! "not yet implemented"), and the outcome as a typed [`GradeReport`]: written as JSON where the
//! runner asks for it (`GPUBOOK_REPORT_DIR`), printed for people on failure. Graders never write
//! progress: the runner that reads the report does.

use super::inputs::{Rng, seed};
use super::report::{Failure, GradeReport, Report};
use gpubook::gpu::Gpu;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Once;
use std::time::Instant;

/// What a grader works with.
pub struct Ctx {
    pub gpu: Gpu,
    pub rng: Rng,
    pub seed: u64,
    pub id: String,
    /// Checks this backend could not make, each with why (reported, never silently passed).
    pub skipped: Vec<String>,
}

impl Ctx {
    /// Notes a check this backend cannot make (e.g. the emulator's access counts, on a GPU).
    pub fn skip_check(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.skipped.contains(&why) {
            self.skipped.push(why);
        }
    }

    /// Runs the learner's function, turning a panic or an error into a `Failure`. An answer that
    /// calls the library's own reference for what it is asked to compute fails.
    pub fn call<T>(&self, f: impl FnOnce() -> gpubook::gpu::Result<T>) -> Result<T, Failure> {
        QUIET.with(|q| q.set(true));
        let (outcome, references) = gpubook::reference::watch(|| catch_unwind(AssertUnwindSafe(f)));
        QUIET.with(|q| q.set(false));
        if !references.is_empty() {
            return Err(Failure::new(format!("your answer called gpubook's own {}", references.join(" and ")))
                .concept("the exercise is to write this yourself: that code is what the grader compares your answer with"));
        }
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
    /// Set by `report_of` and `capture_report`: `grade` leaves its report here instead of printing
    /// or writing it.
    static CAPTURED: RefCell<Option<Option<GradeReport>>> = const { RefCell::new(None) };
    /// Set by `graded!` (through `graded_by`) while a test grades an answer.
    static GRADED: RefCell<Option<Graded>> = const { RefCell::new(None) };
}

/// What a `graded!` test knows at compile time: the crate it was written in and the grader it
/// calls.
#[derive(Debug, Clone)]
struct Graded {
    krate: &'static str,
    chapter: &'static str,
    grader: &'static str,
}

/// `graded!`'s runtime half: runs `test` (a grader called on an answer) knowing which crate the
/// answer comes from and which grader is called, so the report says whose answer it graded and
/// the grader can check that its id is the catalog's entry for that test.
#[doc(hidden)]
pub fn graded_by(krate: &'static str, chapter: &'static str, grader: &'static str, test: impl FnOnce()) {
    GRADED.with(|g| *g.borrow_mut() = Some(Graded { krate, chapter, grader }));
    let outcome = catch_unwind(AssertUnwindSafe(test));
    GRADED.with(|g| *g.borrow_mut() = None);
    if let Err(payload) = outcome {
        resume_unwind(payload);
    }
}

/// One test per exercise, one line each: `gpubook_course::graded!(ch03::vector_add(exercises::ch03::vector_add));`
/// defines the test `vector_add`, which calls the grader `gpubook_course::grade::ch03::vector_add` on the
/// answer(s) given. The calling crate's name is taken where the macro expands, so progress counts
/// only the learner's own crate.
#[macro_export]
macro_rules! graded {
    ($chapter:ident :: $grader:ident ( $($answer:path),+ $(,)? )) => {
        #[test]
        fn $grader() {
            $crate::grade::graded_by(env!("CARGO_PKG_NAME"), stringify!($chapter), stringify!($grader), || {
                $crate::grade::$chapter::$grader($($answer),+)
            });
        }
    };
}

/// Runs `grader` (a grader called on some answer) and returns the report it would print, or
/// `None` when the answer passes. Nothing is printed or written: this is for testing graders
/// against wrong answers (not anybody's attempt). Any other panic (no device, a grader's own bug)
/// goes on unwinding.
pub fn report_of(grader: impl FnOnce()) -> Option<String> {
    capture_report(grader).and_then(|r| r.report)
}

/// Runs `grader` and returns its typed report, without printing or writing it; `None` when the
/// grader never reported (it was not a grader, or it could not start).
pub fn capture_report(grader: impl FnOnce()) -> Option<GradeReport> {
    CAPTURED.with(|c| *c.borrow_mut() = Some(None));
    let outcome = catch_unwind(AssertUnwindSafe(grader));
    let report = CAPTURED.with(|c| c.borrow_mut().take()).flatten();
    match (outcome, report) {
        (_, Some(report)) => Some(report),
        (Ok(()), None) => None,
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

/// A failure, with what the compilers found in the exercise's kernels (the findings of the
/// modules `gpu` loaded): a local that may be read before a store is the likely cause of wrong
/// numbers, and nothing else would name it.
fn with_compiler_warnings(id: &str, gpu: &Gpu, mut failure: Failure) -> Failure {
    let Some(entry) = crate::catalog::Catalog::load_default().ok().and_then(|c| c.get(id).cloned()) else {
        return failure;
    };
    let findings = gpu.compiler_findings();
    for file in &entry.files {
        for f in findings.iter().filter(|f| f.is_in(std::path::Path::new(file))) {
            failure = failure.detail(format!("the compiler warned: {}", f.located()));
        }
    }
    failure
}

/// Grades exercise `id`: runs `body`, reports the outcome, and panics with the report on failure.
pub fn grade<B: FnOnce(&mut Ctx) -> Result<(), Failure>>(id: &str, body: B) {
    install_panic_hook();
    gpubook::reference::grader_thread();
    let graded = GRADED.with(|g| g.borrow().clone());
    if let Some(g) = &graded {
        check_catalog_entry(id, g);
    }
    let seed = seed();
    let started = Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!("\n✗ {id}: no device to grade on: {e}\n  (`gpubook doctor` says what was found)"),
    };
    gpu.set_poison(true);
    gpu.set_content_digests(true);
    let backend = format!("{} ({})", gpu.backend(), gpu.info().name);
    let mut ctx = Ctx { gpu, rng: Rng::new(seed), seed, id: id.to_string(), skipped: Vec::new() };
    let result = body(&mut ctx).map_err(|failure| with_compiler_warnings(id, &ctx.gpu, failure));
    let text = result.as_ref().err().map(|failure| Report { id, failure, seed, backend: backend.clone() }.to_string());
    let report = GradeReport {
        id: id.to_string(),
        passed: result.is_ok(),
        report: text.clone(),
        seed,
        backend,
        graded_crate: graded.map(|g| g.krate.to_string()),
        skipped_checks: ctx.skipped,
        took_ms: started.elapsed().as_millis() as u64,
    };
    let capturing = CAPTURED.with(|c| c.borrow().is_some());
    let report_dir = std::env::var_os(GradeReport::DIR_VAR);
    if capturing {
        CAPTURED.with(|c| *c.borrow_mut() = Some(Some(report)));
    } else if let Some(dir) = &report_dir
        && let Err(e) = report.write(std::path::Path::new(dir))
    {
        panic!("\n✗ {id}: could not write the grader's report into {}: {e}", std::path::Path::new(dir).display());
    }
    if let Some(text) = text {
        if !capturing && report_dir.is_none() {
            // The report goes to stdout, which libtest shows under the failing test; unwinding
            // without the panic hook keeps "thread panicked at" lines and backtraces out of it.
            // (A runner that asked for the report file shows it itself.)
            println!("{text}");
        }
        resume_unwind(Box::new(format!("{id} is not solved yet")));
    }
}

/// A `graded!` test must call the grader its catalog entry names: a mismatch is a maintainer's
/// mistake that would record progress under the wrong exercise.
fn check_catalog_entry(id: &str, g: &Graded) {
    let catalog = match crate::catalog::Catalog::load_default() {
        Ok(c) => c,
        Err(e) => panic!("\n✗ {id}: cannot read exercises.toml to check this test against it: {e:#}"),
    };
    match catalog.get(id) {
        Some(e) if e.test == g.chapter && e.function == g.grader => {}
        Some(e) => panic!(
            "\n✗ the test `{}::{}` called the grader of `{id}`, whose catalog entry is test `{}`, function `{}`",
            g.chapter, g.grader, e.test, e.function
        ),
        None => panic!("\n✗ the test `{}::{}` graded `{id}`, which exercises.toml does not list", g.chapter, g.grader),
    }
}
