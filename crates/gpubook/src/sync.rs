//! The library's one lock-poisoning policy: a poisoned lock is used anyway ([`lock`]).
//!
//! A `Mutex` is poisoned when a thread panicked while holding it. Every lock in gpubook and
//! gpubook-book guards bookkeeping that each update leaves usable (a device's trace and ordering
//! clocks, a backend's stream and event tables, the emulator's timeline, the book's figure
//! counts), and the panic has already been reported where it happened (a grader turns a panic in
//! an answer into its report). Refusing the lock afterwards would only turn that one report into
//! a PoisonError panic in every later call on the same device, in graders and figures that did
//! nothing wrong, burying the first failure. The emulator's own locks follow the same policy.
//! So lock with [`lock`], never with `.lock().unwrap()`.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the data as it is if a panicking thread poisoned it (see the module docs).
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_hands_out_its_data() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }

    /// The policy holds wherever gpubook and gpubook-book lock.
    #[test]
    fn no_lock_unwraps_a_poisoned_lock() {
        let root = crate::paths::build_root();
        let mut found = Vec::new();
        for krate in ["crates/gpubook/src", "crates/gpubook-book/src"] {
            for entry in walkdir::WalkDir::new(root.join(krate)) {
                let path = entry.unwrap().into_path();
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("src/sync.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    let squeezed: String = line.split_whitespace().collect();
                    if [".lock().unwrap()", ".lock().expect(", ".read().unwrap()", ".write().unwrap()"].iter().any(|p| squeezed.contains(p))
                    {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(found.is_empty(), "lock with gpubook::sync::lock (see its docs):\n{}", found.join("\n"));
    }
}
