//! Running a learner's code under a grader: a fresh device (allocations poisoned, so unwritten
//! outputs show), the learner's panics caught and explained (an untouched stub's `todo!()` reads
//! "not yet implemented"), and the outcome as a typed [`GradeReport`], which the grader returns.
//! Graders never print, write or record anything: `graded!` (a test), `check!` (a notebook) and
//! the runner decide what to do with the report.

use super::inputs::{Rng, seed};
use super::report::{Failure, GradeReport};
use crate::catalog::{Catalog, Exercise};
use gpubook::gpu::Gpu;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;
use std::sync::Once;
use std::time::Instant;

/// What a grader works with.
pub struct Ctx {
    pub gpu: Gpu,
    pub rng: Rng,
    pub seed: u64,
    pub id: String,
    /// The exercise's catalog entry (read once per grade), when exercises.toml lists it.
    pub entry: Option<Exercise>,
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
        let (outcome, references) = quietly(|| gpubook::reference::watch(|| catch_unwind(AssertUnwindSafe(f))));
        if !references.is_empty() {
            return Err(Failure::new(format!("your answer called gpubook's own {}", references.join(" and ")))
                .concept("the exercise is to write this yourself: that code is what the grader compares your answer with"));
        }
        match outcome {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(Failure::from(e)),
            Err((payload, at)) => Err(panic_failure(self.entry.as_ref(), payload.as_ref(), at)),
        }
    }

    /// The exercise's files, as the catalog lists them (relative to exercises/).
    fn files(&self) -> &[String] {
        self.entry.as_ref().map_or(&[], |e| &e.files)
    }
}

thread_local! {
    /// Where the learner's code panicked, while a grader runs it (`Some(None)`: running, no panic
    /// yet). Only a panic hook sees a panic's location, and the hook is global, so it leaves the
    /// location here for the grader on this thread; the panic message becomes part of the report
    /// instead of going to stderr.
    static PANICKED_AT: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// A panic in the learner's code: its payload and where it happened.
type Panicked = (Box<dyn std::any::Any + Send>, String);

/// Runs `f` (the answer under `reference::watch`) with panics kept quiet and their location
/// taken; a panic comes back as its payload and location.
fn quietly<R>(f: impl FnOnce() -> (std::thread::Result<R>, Vec<&'static str>)) -> (Result<R, Panicked>, Vec<&'static str>) {
    install_panic_hook();
    PANICKED_AT.with(|p| *p.borrow_mut() = Some(None));
    let (outcome, references) = f();
    let at = PANICKED_AT.with(|p| p.borrow_mut().take()).flatten().unwrap_or_default();
    (outcome.map_err(|payload| (payload, at)), references)
}

fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = PANICKED_AT.with(|p| match &mut *p.borrow_mut() {
                Some(at) => {
                    *at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                    true
                }
                None => false,
            });
            if !quiet {
                previous(info);
            }
        }));
    });
}

fn panic_failure(entry: Option<&Exercise>, payload: &(dyn std::any::Any + Send), at: String) -> Failure {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    if msg.starts_with("not yet implemented") {
        let todo = msg.trim_start_matches("not yet implemented").trim_start_matches(':').trim();
        let files = entry
            .map(|e| e.files.iter().map(|f| format!("exercises/{f}")).collect::<Vec<_>>().join(" and "))
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
/// modules the grader's device loaded): a local that may be read before a store is the likely
/// cause of wrong numbers, and nothing else would name it.
fn with_compiler_warnings(ctx: &Ctx, mut failure: Failure) -> Failure {
    let findings = ctx.gpu.compiler_findings();
    for file in ctx.files() {
        for f in findings.iter().filter(|f| f.is_in(Path::new(file))) {
            failure = failure.detail(format!("the compiler warned: {}", f.located()));
        }
    }
    failure
}

/// Grades exercise `id`: runs `body` on a fresh device and returns the report. Panics only when
/// there is no device to grade on (nothing was graded).
pub fn grade<B: FnOnce(&mut Ctx) -> Result<(), Failure>>(id: &str, body: B) -> GradeReport {
    gpubook::reference::grader_thread();
    let seed = seed();
    let started = Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!("\n✗ {id}: no device to grade on: {e}\n  (`gpubook doctor` says what was found)"),
    };
    gpu.set_poison(true);
    gpu.set_content_digests(true);
    let backend = format!("{} ({})", gpu.backend(), gpu.info().name);
    let entry = Catalog::load_default().ok().and_then(|c| c.get(id).cloned());
    let mut ctx = Ctx { gpu, rng: Rng::new(seed), seed, id: id.to_string(), entry, skipped: Vec::new() };
    let failure = body(&mut ctx).err().map(|failure| with_compiler_warnings(&ctx, failure));
    let (test, function) = ctx.entry.as_ref().map_or_else(Default::default, |e| (e.test.clone(), e.function.clone()));
    GradeReport {
        id: id.to_string(),
        passed: failure.is_none(),
        failure,
        test,
        function,
        seed,
        backend,
        graded_crate: None,
        skipped_checks: ctx.skipped,
        took_ms: started.elapsed().as_millis() as u64,
    }
}

/// One test per exercise, one line each: `gpubook_course::graded!(ch03::vector_add(exercises::ch03::vector_add));`
/// defines the test `vector_add`, which calls the grader `gpubook_course::grade::ch03::vector_add` on the
/// answer(s) given and hands its report to [`finish_test`]. The calling crate's name is taken
/// where the macro expands, so progress counts only the learner's own crate.
#[macro_export]
macro_rules! graded {
    ($chapter:ident :: $grader:ident ( $($answer:path),+ $(,)? )) => {
        #[test]
        fn $grader() {
            let report = $crate::grade::$chapter::$grader($($answer),+);
            $crate::grade::finish_test(env!("CARGO_PKG_NAME"), stringify!($chapter), stringify!($grader), report);
        }
    };
}

/// `graded!`'s runtime half: checks that the test called the grader of its own catalog entry,
/// writes the report as JSON where the runner asks for it (`GPUBOOK_REPORT_DIR`), else prints it
/// for people, and fails the test when the exercise is not solved.
#[doc(hidden)]
pub fn finish_test(krate: &str, chapter: &str, grader: &str, mut report: GradeReport) {
    report.graded_crate = Some(krate.to_string());
    let id = &report.id;
    if report.test.is_empty() {
        panic!("\n✗ the test `{chapter}::{grader}` graded `{id}`, which exercises.toml does not list");
    }
    if report.test != chapter || report.function != grader {
        panic!(
            "\n✗ the test `{chapter}::{grader}` called the grader of `{id}`, whose catalog entry is test `{}`, function `{}`",
            report.test, report.function
        );
    }
    match std::env::var_os(GradeReport::DIR_VAR) {
        Some(dir) => {
            if let Err(e) = report.write(Path::new(&dir)) {
                panic!("\n✗ {id}: could not write the grader's report into {}: {e}", Path::new(&dir).display());
            }
        }
        // The report goes to stdout, which libtest shows under the failing test. (A runner that
        // asked for the report file shows it itself.)
        None => {
            if let Some(text) = report.text() {
                println!("{text}");
            }
        }
    }
    if !report.passed {
        // Unwinding without the panic hook keeps "thread panicked at" lines and backtraces out
        // of the report.
        resume_unwind(Box::new(format!("{id} is not solved yet")));
    }
}

/// The text of the report `grader` (a grader called on some answer) returns, or `None` when the
/// answer passes: for testing graders against wrong answers.
pub fn report_of(grader: impl FnOnce() -> GradeReport) -> Option<String> {
    grader().text()
}
