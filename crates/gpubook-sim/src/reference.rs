//! Calls into reference code, counted per thread, so that a grader can refuse an answer that
//! calls what it is graded against (a schedule generator, the simulator, a reference kernel's
//! host code). Every function a grader compares with starts with `reference::called("name")`.
//!
//! It lives in this crate, the lowest one that holds reference code; `gpubook::reference`
//! re-exports it for the library's own references. Per thread, not global: tests grade in
//! parallel, and one grader's own reference run must not count against another's answer.

use std::cell::RefCell;

thread_local! {
    static CALLS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// Records that reference code `name` ran on this thread.
pub fn called(name: &'static str) {
    CALLS.with(|c| c.borrow_mut().push(name));
}

/// A point in this thread's record of reference calls.
#[derive(Debug, Clone, Copy)]
pub struct Mark(usize);

/// Where the record stands now.
pub fn mark() -> Mark {
    Mark(CALLS.with(|c| c.borrow().len()))
}

/// The reference code called on this thread since `mark`, each name once, in order.
pub fn since(mark: Mark) -> Vec<&'static str> {
    CALLS.with(|c| {
        let calls = c.borrow();
        let mut names: Vec<&'static str> = Vec::new();
        for name in calls.iter().skip(mark.0) {
            if !names.contains(name) {
                names.push(name);
            }
        }
        names
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_seen_after_the_mark_only() {
        called("before");
        let m = mark();
        assert!(since(m).is_empty());
        called("generate");
        called("generate");
        called("simulate");
        assert_eq!(since(m), ["generate", "simulate"]);
        std::thread::spawn(|| called("elsewhere")).join().unwrap();
        assert_eq!(since(m), ["generate", "simulate"], "another thread's calls do not count here");
    }
}
