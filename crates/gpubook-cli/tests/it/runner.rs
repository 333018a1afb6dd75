//! The learner's runner, end to end through the built `gpubook` binary, in a throwaway copy of
//! the course (GPUBOOK_ROOT points there), so the real checkout's progress and exercises are
//! never touched. Commands that need a device (check, watch) are left to scripts/watch-demo.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ID: &str = "ch03-vector-add";
/// The pattern exercise's files, relative to exercises/ and solutions/.
const FILES: [&str; 2] = ["src/ch03.rs", "kernels/ch03/vector_add.cu"];

/// A course of one exercise: ch03-vector-add's entry from the real exercises.toml, and its files.
fn course() -> tempfile::TempDir {
    // The checkout on the machine the test runs on (it may have been built in another folder).
    let real = gpubook::testing::root();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let catalog = std::fs::read_to_string(real.join("exercises.toml")).expect("reading exercises.toml");
    std::fs::write(dir.path().join("exercises.toml"), only_vector_add(&catalog)).unwrap();
    for side in ["solutions", "exercises"] {
        for file in FILES {
            let to = dir.path().join(side).join(file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(real.join(side).join(file), &to).unwrap_or_else(|e| panic!("copying {side}/{file}: {e}"));
        }
    }
    dir
}

/// The catalog's chapters and the one exercise (others' exercises name files this copy lacks).
fn only_vector_add(catalog: &str) -> String {
    let mut out = String::new();
    for block in catalog.split("\n[[").map(|b| b.trim_start_matches("[[")) {
        if block.starts_with("chapter]]") || block.starts_with("exercise]]") && block.contains(&format!("id = \"{ID}\"")) {
            out.push_str("\n[[");
            out.push_str(block);
        }
    }
    out
}

fn gpubook(root: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(super::gpubook())
        .args(args)
        .env("GPUBOOK_ROOT", root)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running gpubook");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn progress(root: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(root.join(".gpubook/progress.json")).expect("a progress file");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn list_shows_chapters_progress_and_the_next_exercise() {
    let dir = course();
    let out = gpubook(dir.path(), &["list"], "");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Chapter 3 · SPMD and indexing"), "{text}");
    assert!(text.contains(&format!("· {ID}")) && text.contains("← next"), "{text}");
    assert!(text.contains("0/1 passed"), "{text}");
    assert!(!text.contains('\x1b'), "NO_COLOR means no escape codes: {text:?}");

    // A pass recorded with the fingerprint of the files as they are: it stands.
    let catalog = gpubook_course::catalog::Catalog::load(dir.path()).unwrap();
    let fingerprint = gpubook_course::progress::fingerprint(dir.path(), catalog.get(ID).unwrap());
    std::fs::create_dir_all(dir.path().join(".gpubook")).unwrap();
    let passed = format!(r#"{{"exercises":{{"{ID}":{{"status":"passed","attempts":2,"hints_shown":0,"passed_with":"{fingerprint}"}}}}}}"#);
    std::fs::write(dir.path().join(".gpubook/progress.json"), passed).unwrap();
    let text = stdout(&gpubook(dir.path(), &["list"], ""));
    assert!(text.contains(&format!("✓ {ID}")) && text.contains("1/1 passed") && !text.contains("← next"), "{text}");
    let all_passed = gpubook(dir.path(), &["check"], "");
    assert!(all_passed.status.success(), "`check` with everything passed is no error: {}", stdout(&all_passed));
    assert!(stdout(&all_passed).contains("Every exercise has passed"), "{}", stdout(&all_passed));

    // The learner edits the kernel after passing: the pass goes stale until checked again.
    let kernel = dir.path().join("exercises").join(FILES[1]);
    std::fs::write(&kernel, format!("{}\n// edited\n", std::fs::read_to_string(&kernel).unwrap())).unwrap();
    let text = stdout(&gpubook(dir.path(), &["list"], ""));
    assert!(text.contains(&format!("~ {ID}")) && text.contains("changed since it passed"), "{text}");
    assert!(text.contains("0/1 passed, 1 changed since passing") && text.contains("← next"), "{text}");
}

#[test]
fn hints_come_one_more_each_time_and_are_recorded() {
    let dir = course();
    let first = stdout(&gpubook(dir.path(), &["hint", ID], ""));
    assert!(first.contains("hint 1/3:") && !first.contains("hint 2/3"), "{first}");
    assert_eq!(progress(dir.path())["exercises"][ID]["hints_shown"], 1);
    // A part of the id is enough when only one exercise has it.
    let second = stdout(&gpubook(dir.path(), &["hint", "vector-add"], ""));
    assert!(second.contains("hint 1/3:") && second.contains("hint 2/3:"), "{second}");
    gpubook(dir.path(), &["hint"], "");
    let after = stdout(&gpubook(dir.path(), &["hint", ID], ""));
    assert!(after.contains("No more hints") && after.contains("hint 3/3:"), "{after}");
    assert_eq!(progress(dir.path())["exercises"][ID]["hints_shown"], 3);
}

#[test]
fn the_solution_waits_for_a_pass_unless_forced() {
    let dir = course();
    let refused = gpubook(dir.path(), &["solution", ID], "");
    assert!(!refused.status.success() && stdout(&refused).contains("has not passed yet"), "{}", stdout(&refused));
    let forced = gpubook(dir.path(), &["solution", ID, "--force"], "");
    let text = stdout(&forced);
    assert!(forced.status.success(), "{text}");
    assert!(text.contains("── solutions/src/ch03.rs ──") && text.contains("── solutions/kernels/ch03/vector_add.cu ──"), "{text}");
    assert!(text.contains("stream.clone_htod(a)?"), "the answer is shown: {text}");
    assert!(!text.contains("// SOLUTION") && !text.contains("todo!("), "markers and stub are left out: {text}");
}

#[test]
fn reset_restores_the_stub_after_a_yes() {
    let dir = course();
    let kernel: PathBuf = dir.path().join("exercises").join(FILES[1]);
    // The course was copied with the generated stubs in exercises/.
    let stub = std::fs::read_to_string(&kernel).unwrap();
    std::fs::write(&kernel, "// my half-done kernel\n").unwrap();

    let declined = gpubook(dir.path(), &["reset", ID], "n\n");
    assert!(stdout(&declined).contains("Nothing changed"), "{}", stdout(&declined));
    assert_eq!(std::fs::read_to_string(&kernel).unwrap(), "// my half-done kernel\n");

    let asked = gpubook(dir.path(), &["reset", ID], "y\n");
    assert!(asked.status.success() && stdout(&asked).contains("[y/N]"), "{}", stdout(&asked));
    assert_eq!(std::fs::read_to_string(&kernel).unwrap(), stub);

    std::fs::write(&kernel, "// again\n").unwrap();
    let yes = gpubook(dir.path(), &["reset", ID, "--yes"], "");
    assert!(yes.status.success(), "{}{}", stdout(&yes), String::from_utf8_lossy(&yes.stderr));
    assert_eq!(std::fs::read_to_string(&kernel).unwrap(), stub);
}

#[test]
fn an_unknown_exercise_is_a_clear_error() {
    let dir = course();
    let out = gpubook(dir.path(), &["hint", "ch99-nothing"], "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no exercise `ch99-nothing`") && err.contains("gpubook list"), "{err}");
}
