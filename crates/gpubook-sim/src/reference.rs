//! Calls into reference code, watched while a learner's answer runs, so that a grader can refuse an
//! answer that calls what it is graded against (a schedule generator, the simulator, a reference
//! kernel's host code). Every function a grader compares with starts with
//! `reference::called("name")`; graders run answers inside [`watch`].
//!
//! A call counts against the answer when it is made on the answer's own thread during `watch`, or
//! on a thread that is no grader's while this answer is the only one being watched (an answer
//! that spawns a thread to call the reference; the runner grades one exercise at a time, so it
//! sees those). Graders' own reference runs, on their threads outside `watch`, never count, and
//! neither does another test's stray thread while tests grade in parallel.
//!
//! It lives in this crate, the lowest one that holds reference code; `gpubook::reference`
//! re-exports it.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// This thread runs a grader (set for the whole of `watch`, and by `grader_thread`).
    static GRADER: Cell<bool> = const { Cell::new(false) };
    /// Reference calls made on this thread during its `watch`, when one is open.
    static WATCHED: RefCell<Option<Vec<&'static str>>> = const { RefCell::new(None) };
}

/// How many answers are being watched now, on any thread.
static OPEN: AtomicUsize = AtomicUsize::new(0);
/// Reference calls made by threads that are no grader's while exactly one answer was watched.
static STRAY: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// Records that reference code `name` ran.
pub fn called(name: &'static str) {
    let watched = WATCHED.with(|w| match w.borrow_mut().as_mut() {
        Some(calls) => {
            calls.push(name);
            true
        }
        None => false,
    });
    if !watched && !GRADER.with(Cell::get) && OPEN.load(Ordering::SeqCst) == 1 {
        // A poisoned lock only means another thread panicked while pushing: the list is intact.
        STRAY.lock().unwrap_or_else(|e| e.into_inner()).push(name);
    }
}

/// Marks this thread as a grader's, so its own reference runs never count against an answer.
pub fn grader_thread() {
    GRADER.with(|g| g.set(true));
}

/// Runs `answer` and returns what it returned with the reference code it called (each name once).
pub fn watch<R>(answer: impl FnOnce() -> R) -> (R, Vec<&'static str>) {
    grader_thread();
    let stray_from = STRAY.lock().unwrap_or_else(|e| e.into_inner()).len();
    let outer = WATCHED.with(|w| w.borrow_mut().replace(Vec::new()));
    OPEN.fetch_add(1, Ordering::SeqCst);
    // Unwinding passes through here: the bookkeeping must be undone either way.
    struct Close;
    impl Drop for Close {
        fn drop(&mut self) {
            OPEN.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let close = Close;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(answer));
    drop(close);
    let mut calls = WATCHED.with(|w| std::mem::replace(&mut *w.borrow_mut(), outer)).unwrap_or_default();
    let stray = STRAY.lock().unwrap_or_else(|e| e.into_inner());
    calls.extend(stray.iter().skip(stray_from));
    drop(stray);
    let mut names: Vec<&'static str> = Vec::new();
    for name in calls {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match result {
        Ok(r) => (r, names),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_count_only_inside_watch_or_from_stray_threads() {
        called("before");
        let ((), names) = watch(|| {
            called("generate");
            called("generate");
            called("simulate");
        });
        assert_eq!(names, ["generate", "simulate"]);
        let ((), names) = watch(|| std::thread::spawn(|| called("from a thread")).join().unwrap());
        assert_eq!(names, ["from a thread"], "a thread the answer spawns is seen too");
        called("the grader's own run");
        let ((), names) = watch(|| {});
        assert!(names.is_empty(), "{names:?}");
    }
}
