//! What an exercise asks the learner to write, read from the generated stubs in `exercises/`,
//! so that an exercise box always matches the files the learner opens: each function as its
//! declaration (the body elided) with the first sentence of its documentation.

use std::path::Path;

/// One function the learner completes (or, for an exercise whose stub is complete code with
/// something missing, the function the grader calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// `exercises/src/ch03.rs`, as the learner finds it.
    pub file: String,
    pub summary: Option<String>,
    /// The declaration up to its opening brace, then `{ ... }`.
    pub declaration: String,
    pub lang: &'static str,
}

/// The functions of `files` (relative to `exercises/`) that the exercise asks for: in Rust, the
/// exercise's own `function` and any other function still holding `todo!(` that is not another
/// exercise's (`others`); in CUDA C, every function holding a `TODO`.
pub fn of_files(exercises: &Path, files: &[String], function: &str, others: &[&str]) -> anyhow::Result<Vec<Signature>> {
    let mut out = Vec::new();
    for f in files {
        let path = exercises.join(f);
        let text = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let rust = f.ends_with(".rs");
        for func in functions(&text, rust) {
            let wanted = if rust { func.name == function || (func.stub && !others.contains(&func.name.as_str())) } else { func.stub };
            if wanted {
                let lang = if rust { "rust" } else { "c" };
                out.push(Signature { file: format!("exercises/{f}"), summary: func.summary, declaration: func.declaration, lang });
            }
        }
    }
    if out.is_empty() {
        anyhow::bail!(
            "{} hold no function `{function}` and nothing left to write (`todo!(`, `TODO`): is exercises/ generated?",
            files.join(", ")
        );
    }
    Ok(out)
}

/// A function of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub summary: Option<String>,
    pub declaration: String,
    /// Its body still holds the stub's marker (`todo!(` in Rust code, `TODO` in a C comment).
    pub stub: bool,
}

/// The functions of `text` in file order: Rust `fn` items at any depth, or CUDA C functions
/// declared at the start of a line.
pub fn functions(text: &str, rust: bool) -> Vec<Function> {
    let lines: Vec<&str> = text.lines().collect();
    let heads: Vec<usize> = (0..lines.len()).filter(|&i| is_header(lines[i], rust)).collect();
    // A C declaration may put its return type on lines of its own, above the name:
    // `extern "C" __global__ void` / `name(...) {`.
    let starts: Vec<(usize, usize)> = heads
        .iter()
        .map(|&h| {
            let mut s = h;
            while !rust && s > 0 && is_type_line(lines[s - 1]) {
                s -= 1;
            }
            (s, h)
        })
        .collect();
    let marker = if rust { "todo!(" } else { "TODO" };
    starts
        .iter()
        .enumerate()
        .map(|(k, &(s, head))| {
            let open = (head..lines.len()).find(|&j| lines[j].contains('{')).unwrap_or(head);
            let end = starts.get(k + 1).map(|n| n.0).unwrap_or(lines.len()).max(open + 1);
            let stub = lines[open..end].iter().any(|l| l.contains(marker) && (!rust || !is_comment(l)));
            let mut decl: Vec<String> = lines[s..=open].iter().map(|l| l.to_string()).collect();
            if let Some(last) = decl.last_mut() {
                let brace = last.find('{').unwrap_or(last.len());
                *last = format!("{}{{ ... }}", &last[..brace]);
            }
            // The first line as written; the rest indented one level, whatever alignment they had
            // (a wide source aligns parameters far to the right, which a box has no room for).
            let declaration = decl
                .iter()
                .enumerate()
                .map(|(i, l)| if i == 0 { l.trim_start().to_string() } else { format!("    {}", l.trim_start()) })
                .collect::<Vec<_>>()
                .join("\n");
            Function { name: name_of(lines[head]), summary: summary_above(&lines, s, rust), declaration, stub }
        })
        .collect()
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//") || t.starts_with("/*")
}

fn is_header(line: &str, rust: bool) -> bool {
    let t = line.trim_start();
    if rust {
        ["pub fn ", "fn ", "pub(crate) fn ", "pub unsafe fn ", "unsafe fn "].iter().any(|p| t.starts_with(p))
    } else {
        let at_start = line.len() == t.len();
        let not = ["//", "#", "}", "struct", "static", "const", "typedef", "return"];
        at_start && t.contains('(') && !t.trim_end().ends_with(';') && !not.iter().any(|p| t.starts_with(p))
    }
}

/// A line of a C declaration before its name: words only, at the start of a line
/// (`extern "C" __global__ void`, `static __device__ float`).
fn is_type_line(line: &str) -> bool {
    let t = line.trim_end();
    line.len() == line.trim_start().len()
        && !t.is_empty()
        && !t.starts_with("//")
        && !t.starts_with('#')
        && !t.contains(['(', ')', ';', '{', '}', '='])
}

/// The identifier before the first `(` (or `<` of a generic).
fn name_of(header: &str) -> String {
    let before = header.split(['(', '<']).next().unwrap_or("");
    before.split_whitespace().last().unwrap_or("").trim_start_matches('*').to_string()
}

/// The first sentence of the comment block right above line `s` (doc comments in Rust, `//`
/// comments in CUDA C), attributes and ANCHOR lines skipped.
fn summary_above(lines: &[&str], s: usize, rust: bool) -> Option<String> {
    let prefix = if rust { "///" } else { "//" };
    let mut block: Vec<&str> = Vec::new();
    for l in lines[..s].iter().rev() {
        let t = l.trim();
        if t.contains("ANCHOR") || t.starts_with("#[") {
            continue;
        }
        match t.strip_prefix(prefix) {
            Some(rest) if !(rust && rest.starts_with('/')) => block.push(rest.trim()),
            _ => break,
        }
    }
    block.reverse();
    let text = block.into_iter().take_while(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return None;
    }
    let end = text.match_indices(". ").map(|(i, _)| i + 1).next().unwrap_or(text.len());
    Some(text[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stubs(text: &str, rust: bool) -> Vec<(String, Option<String>, String)> {
        functions(text, rust).into_iter().filter(|f| f.stub).map(|f| (f.name, f.summary, f.declaration)).collect()
    }

    #[test]
    fn rust_stubs_give_their_signature_and_summary() {
        let src = "use x;\n\n// ANCHOR: f\n/// Adds. More words here.\n///\n/// Details.\npub fn vector_add(gpu: &Gpu,\n    a: &[f32]) -> Result<Vec<f32>> {\n    let m = 1;\n    todo!(\"go\")\n}\n\n/// Given.\npub fn done() -> u32 {\n    3\n}\n";
        let s = stubs(src, true);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, "vector_add");
        assert_eq!(s[0].1.as_deref(), Some("Adds."));
        assert_eq!(s[0].2, "pub fn vector_add(gpu: &Gpu,\n    a: &[f32]) -> Result<Vec<f32>> { ... }");
        assert!(!functions(src, true)[1].stub);
    }

    #[test]
    fn a_todo_inside_a_closure_belongs_to_its_function() {
        let src = "/// 1F1B.\npub fn one(pp: usize) -> Vec<u32> {\n    (0..pp)\n        .map(|r| {\n            todo!(\"x\");\n        })\n        .collect()\n}\n";
        assert_eq!(stubs(src, true), vec![("one".into(), Some("1F1B.".into()), "pub fn one(pp: usize) -> Vec<u32> { ... }".into())]);
    }

    #[test]
    fn cuda_stubs_give_each_function_with_a_todo() {
        let src = "#include \"x.cuh\"\n#define TILE 16\n// Flips.\n__device__ void ll_flip(int* idx) {\n    // TODO: flip\n}\n\n// Harness.\nextern \"C\" __global__ void run(int* r) {\n    go(r);\n}\n// Sends.\n__device__ void ll_send(const LLCtx& c) {\n    int x = 1;\n    // TODO: send\n    // TODO: more\n}\n// Gates.\nextern \"C\" __global__ void\ngate(const float* logits,\n                  int* idx) {\n    // TODO: gate\n}\n";
        let s = stubs(src, false);
        assert_eq!(s.len(), 3);
        assert_eq!(
            s[2],
            (
                "gate".into(),
                Some("Gates.".into()),
                "extern \"C\" __global__ void\n    gate(const float* logits,\n    int* idx) { ... }".into()
            )
        );
        assert_eq!(s[0], ("ll_flip".into(), Some("Flips.".into()), "__device__ void ll_flip(int* idx) { ... }".into()));
        assert_eq!(s[1].2, "__device__ void ll_send(const LLCtx& c) { ... }");
        assert_eq!(functions(src, false).len(), 4);
    }
}
