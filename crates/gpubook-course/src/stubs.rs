//! Stubs are made from solutions: the solution file is the source of truth. A marked region
//!
//! ```text
//!     // SOLUTION
//!     ...the answer...
//!     // STUB
//!     // todo!("copy a and b to the device ...")
//!     // END SOLUTION
//! ```
//!
//! becomes, in the learner's copy, just the STUB lines with their `// ` taken off. The same
//! markers work in .rs and .cu files.
//!
//! The crates' scaffolding is generated from exercises.toml, for both crates: Cargo.toml (one
//! feature per chapter, so the runner can build one chapter while another does not compile),
//! src/lib.rs (the chapter modules) and tests/chNN.rs (one `graded!` line per exercise).
//! `gpubook dev stubs --check` fails when any of it has drifted (CI runs it).

use crate::catalog::Catalog;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

const BEGIN: &str = "// SOLUTION";
const STUB: &str = "// STUB";
const END: &str = "// END SOLUTION";

/// The learner's version of one solution file.
pub fn stub_of(solution: &str, name: &str) -> anyhow::Result<String> {
    enum State {
        Outside,
        Solution,
        Stub,
    }
    let mut state = State::Outside;
    let mut out = String::with_capacity(solution.len());
    for (i, line) in solution.lines().enumerate() {
        let t = line.trim();
        match state {
            State::Outside if t == BEGIN => state = State::Solution,
            State::Outside if t == STUB || t == END => bail!("{name}:{}: `{t}` without `{BEGIN}` before it", i + 1),
            State::Outside => {
                out.push_str(&line.replace("solutions::", "exercises::"));
                out.push('\n');
            }
            State::Solution if t == STUB => state = State::Stub,
            State::Solution if t == END => state = State::Outside,
            State::Solution if t == BEGIN => bail!("{name}:{}: nested `{BEGIN}`", i + 1),
            State::Solution => {}
            State::Stub if t == END => state = State::Outside,
            State::Stub => {
                let indent = &line[..line.len() - line.trim_start().len()];
                let body = t
                    .strip_prefix("// ")
                    .or_else(|| t.strip_prefix("//"))
                    .with_context(|| format!("{name}:{}: lines between `{STUB}` and `{END}` must be comments", i + 1))?;
                out.push_str(if body.is_empty() { "" } else { indent });
                out.push_str(body);
                out.push('\n');
            }
        }
    }
    if !matches!(state, State::Outside) {
        bail!("{name}: `{BEGIN}` without `{END}`");
    }
    Ok(out)
}

/// The two crates the generator writes.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Exercises,
    Solutions,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Exercises => "exercises",
            Side::Solutions => "solutions",
        }
    }
}

/// Every generated file, as (path from the root, contents).
pub fn expected(root: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let catalog = Catalog::load(root)?;
    let mut files = Vec::new();
    for side in [Side::Exercises, Side::Solutions] {
        let dir = PathBuf::from(side.name());
        files.push((dir.join("Cargo.toml"), cargo_toml(&catalog, side)));
        files.push((dir.join("src/lib.rs"), lib_rs(&catalog, side)));
        for test in catalog.tests() {
            files.push((dir.join(format!("tests/{test}.rs")), test_rs(&catalog, test, side)));
        }
    }
    let solutions = root.join("solutions");
    let mut sources = Vec::new();
    for dir in ["src", "kernels"] {
        collect(&solutions.join(dir), &mut sources)?;
    }
    sources.sort();
    for path in sources {
        let rel = path.strip_prefix(&solutions).expect("below solutions/").to_path_buf();
        if rel == Path::new("src/lib.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        files.push((Path::new("exercises").join(&rel), stub_of(&text, &format!("solutions/{}", rel.display()))?));
    }
    Ok(files)
}

fn cargo_toml(catalog: &Catalog, side: Side) -> String {
    let description = match side {
        Side::Exercises => "gpubook exercises: the only folder a learner edits",
        Side::Solutions => "The exercises, solved: the source of truth from which exercises/ is generated",
    };
    let tests = catalog.tests();
    let defaults: Vec<String> = tests.iter().map(|t| format!("\"{t}\"")).collect();
    let mut out = format!(
        "# Generated from exercises.toml by `gpubook dev stubs`: edit the catalog, not this file.\n\
         [package]\nname = \"{}\"\nversion = \"0.1.0\"\ndescription = \"{description}\"\n\
         edition.workspace = true\nrust-version.workspace = true\nlicense.workspace = true\npublish = false\n\n\
         [dependencies]\ngpubook.workspace = true\n\n\
         # The tests call the graders; the crate itself cannot.\n[dev-dependencies]\ngpubook-course.workspace = true\n\n\
         # One feature per chapter, all on by default. The runner builds one chapter at a time\n\
         # (`--no-default-features --features ch03`), so a file that does not compile stops only its\n\
         # own chapter.\n[features]\ndefault = [{}]\n",
        side.name(),
        defaults.join(", ")
    );
    for t in &tests {
        out.push_str(&format!("{t} = []\n"));
    }
    for t in &tests {
        out.push_str(&format!("\n[[test]]\nname = \"{t}\"\nrequired-features = [\"{t}\"]\n"));
    }
    out
}

fn lib_rs(catalog: &Catalog, side: Side) -> String {
    let mut out = match side {
        Side::Exercises => String::from(
            "//! gpubook's exercises. Each chapter is a module; its kernels live under `kernels/chNN/`.\n\
             //! Edit the functions and kernels marked TODO, then grade them with `gpubook check <id>` or\n\
             //! `gpubook watch` (or all at once: `cargo test -p exercises`).\n//!\n\
             //! Generated from exercises.toml by `gpubook dev stubs`.\n\n\
             // The learner's stubs leave parameters and imports unused until they are filled in.\n\
             #![allow(unused_variables, unused_mut, unused_imports, unreachable_code, clippy::diverging_sub_expression)]\n\n",
        ),
        Side::Solutions => String::from(
            "//! gpubook's exercises, solved: the source of truth from which exercises/ is generated.\n//!\n\
             //! Generated from exercises.toml by `gpubook dev stubs`.\n\n",
        ),
    };
    for t in catalog.tests() {
        out.push_str(&format!("#[cfg(feature = \"{t}\")]\npub mod {t};\n"));
    }
    out
}

fn test_rs(catalog: &Catalog, test: &str, side: Side) -> String {
    let chapter = catalog.in_test(test).next().map_or(0, |e| e.chapter);
    let mut out = format!(
        "//! Chapter {chapter}'s exercises, graded: one line each, generated from exercises.toml by\n\
         //! `gpubook dev stubs`. The checks live in crates/gpubook-course/src/grade/{test}.rs.\n\n"
    );
    let krate = side.name();
    for e in catalog.in_test(test) {
        let answers: Vec<String> = e.answers().iter().map(|a| format!("{krate}::{test}::{a}")).collect();
        out.push_str(&format!("gpubook_course::graded!({test}::{}({}));\n", e.function, answers.join(", ")));
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if entry.file_type().is_file() {
            out.push(entry.into_path());
        }
    }
    Ok(())
}

/// Generated files that differ from what is on disk (missing, changed), and files under the
/// generated folders that nothing generates.
pub fn drift(root: &Path) -> anyhow::Result<Vec<String>> {
    let expected = expected(root)?;
    let mut problems = Vec::new();
    for (rel, text) in &expected {
        match std::fs::read_to_string(root.join(rel)) {
            Ok(actual) if &actual == text => {}
            Ok(_) => problems.push(format!("{} differs from what the generator makes", rel.display())),
            Err(_) => problems.push(format!("{} is missing", rel.display())),
        }
    }
    let mut actual = Vec::new();
    for dir in ["exercises/src", "exercises/kernels", "exercises/tests", "solutions/tests"] {
        collect(&root.join(dir), &mut actual)?;
    }
    for path in actual {
        let rel = path.strip_prefix(root).expect("below the root");
        if !expected.iter().any(|(r, _)| r == rel) {
            problems.push(format!("{} is not generated from solutions/ or exercises.toml", rel.display()));
        }
    }
    Ok(problems)
}

/// Writes the generated files (`only`: just this path from the root). Returns how many.
pub fn write(root: &Path, only: Option<&Path>) -> anyhow::Result<usize> {
    let mut n = 0;
    for (rel, text) in expected(root)? {
        if only.is_some_and(|o| o != rel) {
            continue;
        }
        let path = root.join(&rel);
        std::fs::create_dir_all(path.parent().expect("a file has a folder"))
            .with_context(|| format!("creating the folder of {}", path.display()))?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_solution_region_becomes_its_stub() {
        let sol =
            "fn f() -> i32 {\n    // SOLUTION\n    40 + 2\n    // STUB\n    // todo!(\"add\")\n    // END SOLUTION\n}\nuse solutions::x;\n";
        assert_eq!(stub_of(sol, "t").unwrap(), "fn f() -> i32 {\n    todo!(\"add\")\n}\nuse exercises::x;\n");
    }

    #[test]
    fn a_region_without_stub_just_disappears() {
        let sol = "__global__ void k() {\n    // SOLUTION\n    x = 1;\n    // END SOLUTION\n}\n";
        assert_eq!(stub_of(sol, "t").unwrap(), "__global__ void k() {\n}\n");
    }

    #[test]
    fn unbalanced_markers_are_errors() {
        assert!(stub_of("// SOLUTION\nx\n", "t").unwrap_err().to_string().contains("without `// END SOLUTION`"));
        assert!(stub_of("// STUB\n", "t").is_err());
        assert!(stub_of("// SOLUTION\n// STUB\nnot a comment\n// END SOLUTION\n", "t").is_err());
    }
}
