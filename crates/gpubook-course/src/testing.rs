//! Helpers for the graders' own tests: a wrong answer must fail, naming its concept, and a
//! wrong answer is best written as a small mutation of the solution. Tests that need a device
//! skip, saying why, when there is none (gpubook's `testing::device_or_skip`).

use gpubook::testing::{device_or_skip, workspace_file};

/// Runs a grader on a wrong answer and checks that its report contains each of `words` (a
/// grader that cannot fail is a bug); returns the report for further checks, or `None` (after
/// printing SKIPPED) when there is no device.
pub fn expect_failure(test: &str, words: &[&str], grader: impl FnOnce() -> crate::grade::GradeReport) -> Option<String> {
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
pub fn expect_failure_on_emulator(test: &str, words: &[&str], grader: impl FnOnce() -> crate::grade::GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    let emulated = gpu.backend() == gpubook::gpu::BackendKind::Emulator;
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
/// [`Gpu::read_kernel_file_as`](gpubook::gpu::Gpu::read_kernel_file_as)).
pub fn with_kernel<R>(gpu: &gpubook::gpu::Gpu, rel: &str, text: String, f: impl FnOnce() -> R) -> R {
    gpu.read_kernel_file_as(rel, text);
    f()
}
