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
//! markers work in .rs and .cu files. `gpubook stubs --check` fails when `exercises/` has drifted
//! from what the solutions give (CI runs it); `--write` regenerates it.

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

/// Every file `exercises/` should hold, generated from `solutions/` (except Cargo.toml and
/// README.md, which differ by design).
pub fn expected(root: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let solutions = root.join("solutions");
    let mut files = Vec::new();
    for dir in ["src", "kernels", "tests"] {
        collect(&solutions.join(dir), &mut files)?;
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&solutions).expect("below solutions/").to_path_buf();
            let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok((rel.clone(), stub_of(&text, &format!("solutions/{}", rel.display()))?))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Paths under `exercises/` that differ from the generated stubs (missing, changed or extra).
pub fn drift(root: &Path) -> anyhow::Result<Vec<String>> {
    let expected = expected(root)?;
    let mut problems = Vec::new();
    for (rel, text) in &expected {
        let path = root.join("exercises").join(rel);
        match std::fs::read_to_string(&path) {
            Ok(actual) if &actual == text => {}
            Ok(_) => problems.push(format!("exercises/{} differs from the stub of solutions/{}", rel.display(), rel.display())),
            Err(_) => problems.push(format!("exercises/{} is missing", rel.display())),
        }
    }
    let mut actual = Vec::new();
    for dir in ["src", "kernels", "tests"] {
        collect(&root.join("exercises").join(dir), &mut actual)?;
    }
    for path in actual {
        let rel = path.strip_prefix(root.join("exercises")).expect("below exercises/");
        if !expected.iter().any(|(r, _)| r == rel) {
            problems.push(format!("exercises/{} has no counterpart in solutions/", rel.display()));
        }
    }
    Ok(problems)
}

/// Writes the generated stubs into `exercises/` (one file, or all).
pub fn write(root: &Path, only: Option<&Path>) -> anyhow::Result<usize> {
    let mut n = 0;
    for (rel, text) in expected(root)? {
        if only.is_some_and(|o| o != rel) {
            continue;
        }
        let path = root.join("exercises").join(&rel);
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
