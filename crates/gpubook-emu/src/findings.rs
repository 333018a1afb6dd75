//! What a build of a learner's source found that is no launch failure but most likely explains
//! wrong numbers: a local read before anything was stored to it (uninitialized.rs, from the
//! compiler), two `extern __shared__` arrays in one function (source.rs, which overlap). Each is
//! said once on stderr, and [`compiler_warnings`] hands them to graders by file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One finding at a line of the learner's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub file: PathBuf,
    pub line: u32,
    /// A sentence or two, without the location.
    pub text: String,
}

impl Finding {
    fn located(&self) -> String {
        format!("{}:{}: {}", self.file.display(), self.line, self.text)
    }
}

/// What this process's builds found, each once.
static FOUND: Mutex<Vec<Finding>> = Mutex::new(Vec::new());

/// Keeps `findings`, and says each new one once on stderr.
pub(crate) fn note(findings: impl IntoIterator<Item = Finding>) {
    let mut found = FOUND.lock().unwrap_or_else(|p| p.into_inner());
    for f in findings {
        if !found.contains(&f) {
            eprintln!("gpubook: warning: {}", f.located());
            found.push(f);
        }
    }
}

/// Keeps what another compiler said (NVRTC, on a GPU) beside the emulator's findings, so that
/// graders find both in one place.
pub fn note_finding(file: &Path, line: u32, text: String) {
    note([Finding { file: file.to_path_buf(), line, text }]);
}

/// What this process's builds found in `file`, one `file:line: text` each. Either path may be
/// the other's tail (whole components): `kernels/ch05/row_sums.cu` finds
/// `exercises/kernels/ch05/row_sums.cu`, and a source loaded as bare `row_sums.cu`.
pub fn compiler_warnings(file: &Path) -> Vec<String> {
    let found = FOUND.lock().unwrap_or_else(|p| p.into_inner());
    found.iter().filter(|f| same_file(&f.file, file)).map(Finding::located).collect()
}

/// One path is the other's tail, by whole components.
pub fn same_file(a: &Path, b: &Path) -> bool {
    a.ends_with(b) || b.ends_with(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_kept_once_and_found_by_the_tail_of_their_path() {
        let f = Finding { file: "/home/me/exercises/kernels/kept_test.cu".into(), line: 14, text: "`v` may be read".into() };
        note([f.clone(), f.clone()]);
        assert_eq!(compiler_warnings(Path::new("kernels/kept_test.cu")), ["/home/me/exercises/kernels/kept_test.cu:14: `v` may be read"]);
        assert!(compiler_warnings(Path::new("test.cu")).is_empty(), "whole components only");
        note([Finding { file: "bare_test.cu".into(), line: 2, text: "bare".into() }]);
        assert_eq!(compiler_warnings(Path::new("kernels/ch01/bare_test.cu")), ["bare_test.cu:2: bare"]);
    }
}
