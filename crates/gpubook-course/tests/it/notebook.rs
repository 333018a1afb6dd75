//! A notebook check: the same grader as `gpubook check`, its report as HTML, and the outcome
//! recorded in the course's progress like any other check.

use gpubook::gpu::{Gpu, Result};
use gpubook::testing::{device_or_skip, root};
use gpubook_course::grade::ch03;
use gpubook_course::notebook::check_in;
use gpubook_course::progress::{Progress, Standing};

fn course() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("exercises.toml"), dir.path().join("exercises.toml")).unwrap();
    dir
}

#[test]
fn a_stub_fails_with_its_report_and_a_solution_passes_and_counts() {
    if device_or_skip("a_stub_fails_with_its_report_and_a_solution_passes_and_counts").is_none() {
        return;
    }
    let dir = course();
    let stub = |_: &Gpu, _: &[f32], _: &[f32]| -> Result<Vec<f32>> { todo!("copy a and b to the device, ...") };
    let failed = check_in(dir.path(), "ch03", "vector_add", || ch03::vector_add(stub));
    assert!(!failed.passed());
    assert!(
        failed.html().contains("not yet implemented")
            && failed.html().contains("#c62828")
            && failed.html().contains("class=\"gpubook-report\"")
            && failed.html().contains("<b>concept:</b>"),
        "{}",
        failed.html()
    );
    let catalog = gpubook_course::catalog::Catalog::load(dir.path()).unwrap();
    let ex = catalog.get("ch03-vector-add").unwrap();
    assert_eq!(Progress::load(dir.path()).standing(dir.path(), ex), Standing::Failing);

    let passed = check_in(dir.path(), "ch03", "vector_add", || ch03::vector_add(solutions::ch03::vector_add));
    assert!(passed.passed(), "{passed}");
    assert!(passed.html().contains("✓ ch03-vector-add passed") && passed.not_recorded.is_none(), "{}", passed.html());
    assert_eq!(Progress::load(dir.path()).standing(dir.path(), ex), Standing::Passed, "a notebook's pass counts");
}

#[test]
fn a_failing_notebook_does_not_clear_a_pass_of_the_files() {
    if device_or_skip("a_failing_notebook_does_not_clear_a_pass_of_the_files").is_none() {
        return;
    }
    let dir = course();
    let catalog = gpubook_course::catalog::Catalog::load(dir.path()).unwrap();
    let ex = catalog.get("ch03-vector-add").unwrap();
    let passed = check_in(dir.path(), "ch03", "vector_add", || ch03::vector_add(solutions::ch03::vector_add));
    assert!(passed.passed() && passed.not_recorded.is_none(), "{passed}");
    // Running the chapter's notebook top to bottom runs the stub's check too.
    let stub = |_: &Gpu, _: &[f32], _: &[f32]| -> Result<Vec<f32>> { todo!("copy a and b to the device, ...") };
    let failed = check_in(dir.path(), "ch03", "vector_add", || ch03::vector_add(stub));
    assert!(!failed.passed());
    assert!(failed.html().contains("passed already"), "{}", failed.html());
    let progress = Progress::load(dir.path());
    assert_eq!(progress.standing(dir.path(), ex), Standing::Passed, "the pass of the files stands");
    assert_eq!(progress.entry("ch03-vector-add").attempts, 2, "the attempt still counts");
}
