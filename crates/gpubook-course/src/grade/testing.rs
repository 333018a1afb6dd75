//! What the chapters' wrong-answer tests share (grade/chNN/wrong.rs): a wrong answer must fail,
//! naming its concept, and a wrong answer is best written as a small mutation of the solution.
//! Tests that need a device skip, saying why, when there is none (gpubook's
//! `testing::device_or_skip`).

use crate::grade::{GradeReport, report_of};
use gpubook::gpu::{BackendKind, Function, Gpu, LaunchConfig, Result, Source};
use gpubook::testing::{device_or_skip, root, workspace_file};

/// The concept a report names when the kernel did not do the work (the host did).
pub const KERNEL_DOES_THE_WORK: &str = "the kernel does the work";

/// Runs a grader on a wrong answer and checks that its report contains each of `words` (a
/// grader that cannot fail is a bug); returns the report for further checks, or `None` (after
/// printing SKIPPED) when there is no device.
pub fn expect_failure(test: &str, words: &[&str], grader: impl FnOnce() -> GradeReport) -> Option<String> {
    device_or_skip(test)?;
    let report = report_of(grader).unwrap_or_else(|| panic!("{test}: the grader passed a wrong answer"));
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
pub fn expect_failure_on_emulator(test: &str, words: &[&str], grader: impl FnOnce() -> GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    let emulated = gpu.backend() == BackendKind::Emulator;
    match report_of(grader) {
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
pub fn with_kernel<R>(gpu: &Gpu, rel: &str, text: String, f: impl FnOnce() -> R) -> R {
    gpu.read_kernel_file_as(rel, text);
    f()
}

/// Whether a GPU always shows the mistake, or only the emulator is sure to.
#[derive(Clone, Copy, PartialEq)]
pub enum Shows {
    Everywhere,
    OnTheEmulator,
}

/// Runs `grader` on a wrong answer and checks that it fails with a report naming `concept`
/// (every one of the phrases given); a mistake that only the emulator is sure to see may pass on
/// a GPU, which is printed as a NOTE.
pub fn expect_failure_showing(test: &str, shows: Shows, concept: &[&str], grader: impl FnOnce() -> GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    let report = match report_of(grader) {
        Some(report) => report,
        None if shows == Shows::OnTheEmulator && gpu.backend() != BackendKind::Emulator => {
            println!(
                "NOTE {test}: this wrong answer passed on the GPU ({}): the mistake happened not to change the result",
                gpu.info().name
            );
            return;
        }
        None => panic!("{test}: the grader passed a wrong answer"),
    };
    println!("{test}: the grader said:{report}");
    for phrase in concept {
        assert!(report.contains(phrase), "{test}: the report should name `{phrase}`:{report}");
    }
}

/// Runs `grader` and checks it fails naming each of `words`, on the emulator; on a GPU, notes
/// that the check needs the emulator's counts.
pub fn expect_failure_counted(test: &str, words: &[&str], grader: impl FnOnce() -> GradeReport) {
    let Some(gpu) = device_or_skip(test) else { return };
    match report_of(grader) {
        Some(report) => {
            for word in words {
                assert!(report.contains(word), "{test}: the report should say `{word}`:{report}");
            }
            println!("{test}: failed as it should:{report}");
        }
        None if gpu.backend() != BackendKind::Emulator => {
            println!("NOTE {test}: passed on {}: this check needs the emulator's access counts", gpu.info().name)
        }
        None => panic!("{test}: the grader passed a wrong answer"),
    }
}

/// A kernel file of the workspace, by its path from the root.
pub fn workspace_kernel(path: &str) -> Source {
    Source::file(root().join(path))
}

/// A wrong kernel kept beside a chapter's wrong answers: `"ch03/vector_add_no_guard.cu"` is
/// src/grade/ch03/wrong/vector_add_no_guard.cu.
pub fn wrong_kernel(rel: &str) -> Source {
    let (chapter, file) = rel.split_once('/').expect("chNN/file.cu");
    workspace_kernel(&format!("crates/gpubook-course/src/grade/{chapter}/wrong/{file}"))
}

/// A solution's kernel `name`, loaded on `gpu` (`rel` under solutions/kernels/).
pub fn solution_kernel(gpu: &Gpu, rel: &str, name: &str) -> Result<Function> {
    gpu.load_module(Source::file(workspace_file(&format!("solutions/kernels/{rel}"))))?.load_function(name)
}

/// One thread per element, in blocks of 256.
pub fn cfg_1d(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(256).max(1), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

/// A 2-D grid of 2-D blocks.
pub fn cfg_2d(grid: (u32, u32), block: (u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid.0, grid.1, 1), block_dim: (block.0, block.1, 1), shared_mem_bytes: 0 }
}
