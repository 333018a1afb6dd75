//! Helpers for tests that need a device: they run on whichever backend `Gpu::new` picks and
//! skip, saying why, when there is none. A skip is printed, never counted as a pass.

use crate::gpu::Gpu;

/// The device to test on, or `None` after printing why the test is skipped.
pub fn device_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new() {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("SKIPPED {test}: no device: {e}");
            None
        }
    }
}

/// The workspace root on the machine the test runs on (see [`workspace_file`]).
pub fn root() -> std::path::PathBuf {
    crate::paths::relocate(crate::paths::build_root())
}

/// A file of the workspace, by its path from the root, on the machine the test runs on (test
/// binaries built in one folder may run in another: the GPU script does that).
pub fn workspace_file(rel: &str) -> std::path::PathBuf {
    crate::paths::relocate(&crate::paths::build_root().join(rel))
}

/// Runs a grader on a wrong answer and checks that its report contains each of `words` (a
/// grader that cannot fail is a bug); returns the report for further checks, or `None` (after
/// printing SKIPPED) when there is no device.
pub fn expect_failure(test: &str, words: &[&str], grader: impl FnOnce()) -> Option<String> {
    device_or_skip(test)?;
    let report = crate::grade::report_of(grader).unwrap_or_else(|| panic!("{test}: the grader passed a wrong answer"));
    for word in words {
        assert!(report.contains(word), "{test}: the report should say `{word}`:{report}");
    }
    println!("{test}: failed as it should:{report}");
    Some(report)
}

/// A wrong answer whose bug the emulator's check mode diagnoses (a race, an out-of-bounds or
/// uninitialised access): there it must fail naming each of `words`. On a GPU the same bug is
/// undefined behaviour: a failure (any report) or a pass are both possible, and a pass is printed
/// as a NOTE, never hidden.
pub fn expect_failure_on_emulator(test: &str, words: &[&str], grader: impl FnOnce()) {
    let Some(gpu) = device_or_skip(test) else { return };
    let emulated = gpu.backend() == crate::gpu::BackendKind::Emulator;
    match crate::grade::report_of(grader) {
        Some(report) if emulated => {
            for word in words {
                assert!(report.contains(word), "{test}: the report should say `{word}`:{report}");
            }
            println!("{test}: failed as it should:{report}");
        }
        Some(report) => println!("{test}: failed on {} (its effect, not the emulator's diagnosis):{report}", gpu.info().name),
        None if emulated => panic!("{test}: the grader passed a wrong answer"),
        None => println!("NOTE {test}: passed on {}: the bug did not show; the emulator's check mode names it", gpu.info().name),
    }
}

/// A solution's kernel (`rel` under solutions/kernels/, e.g. "ch03/vector_add.cu") with `edits`
/// applied, each `(find, replace)` matching exactly once: a wrong answer written as a small
/// mutation of the solution, so it follows the solution when that changes.
pub fn mutant(rel: &str, edits: &[(&str, &str)]) -> String {
    let path = workspace_file(&format!("solutions/kernels/{rel}"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    for (find, replace) in edits {
        let n = text.matches(find).count();
        assert_eq!(n, 1, "the mutation `{find}` should match solutions/kernels/{rel} exactly once, not {n} times");
        text = text.replacen(find, replace, 1);
    }
    text
}

/// Runs `f` (a solution's host code, say) with the kernel file `rel` read as `text` on `gpu`:
/// every `kernel!("{rel}")` it loads there loads `text` instead (see
/// [`Gpu::read_kernel_file_as`](crate::gpu::Gpu::read_kernel_file_as)).
pub fn with_kernel<R>(gpu: &crate::gpu::Gpu, rel: &str, text: String, f: impl FnOnce() -> R) -> R {
    gpu.read_kernel_file_as(rel, text);
    f()
}
