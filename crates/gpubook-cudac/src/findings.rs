//! What a build of a learner's source found that is no launch failure but most likely explains
//! wrong numbers: two `extern __shared__` arrays in one function (found here, from the text, for
//! both backends), a local read before anything was stored to it (found by a compiler: g++ in the
//! emulator, NVRTC on a GPU). A finding is a value: it travels on the module that was built, and
//! graders add those of the exercise's files to a failure's report.

use crate::decl::{Scope, SharedDecl, classify_brace, statement_start};
use crate::lex::{Kind, tokenize};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One finding at a line of the learner's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub file: PathBuf,
    pub line: u32,
    /// A sentence or two, without the location.
    pub text: String,
}

impl Finding {
    /// `file:line: text`.
    pub fn located(&self) -> String {
        format!("{}:{}: {}", self.file.display(), self.line, self.text)
    }

    /// Whether this finding is in `file`: either path may be the other's tail (whole
    /// components), so `kernels/ch05/row_sums.cu` finds `exercises/kernels/ch05/row_sums.cu`, and
    /// a source loaded as bare `row_sums.cu`.
    pub fn is_in(&self, file: &Path) -> bool {
        same_file(&self.file, file)
    }
}

/// One path is the other's tail, by whole components.
pub fn same_file(a: &Path, b: &Path) -> bool {
    a.ends_with(b) || b.ends_with(a)
}

/// What the text of `path` shows without compiling it: two or more `extern __shared__` arrays in
/// one function (they all start at the block's dynamic shared memory, so they overlap), one
/// finding a function, at its second array, naming them all.
pub fn source_findings(path: &Path, text: &str) -> Vec<Finding> {
    let tokens = tokenize(text);
    let mut findings: Vec<Finding> = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    // The `extern __shared__` names of the function being read, and its finding about them.
    let mut dynamic_names: Vec<&str> = Vec::new();
    let mut alias_finding: Option<usize> = None;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        match t.kind {
            Kind::Punct('{') => {
                let scope = classify_brace(&tokens[..i], &scopes);
                if scope == Scope::Code && !scopes.contains(&Scope::Code) {
                    (dynamic_names, alias_finding) = (Vec::new(), None); // a new function
                }
                scopes.push(scope);
            }
            Kind::Punct('}') => {
                scopes.pop();
            }
            Kind::Ident if t.text == "__shared__" && scopes.contains(&Scope::Code) => {
                let start = statement_start(&tokens, i);
                let Some(end) = (i..tokens.len()).find(|&j| tokens[j].is_punct(';')) else { break };
                if let Some(decl) = SharedDecl::parse(&tokens[start..end]).filter(|d| d.is_extern) {
                    let before = dynamic_names.len();
                    for d in &decl.declarators {
                        if !dynamic_names.contains(&d.name) {
                            dynamic_names.push(d.name);
                        }
                    }
                    if dynamic_names.len() > 1 && dynamic_names.len() > before {
                        let text = alias_text(&dynamic_names);
                        match alias_finding {
                            Some(k) => findings[k].text = text,
                            None => {
                                alias_finding = Some(findings.len());
                                findings.push(Finding { file: path.into(), line: t.line, text });
                            }
                        }
                    }
                }
                i = end + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    findings
}

/// Every `extern __shared__` array starts at the start of the block's dynamic shared memory.
fn alias_text(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let (last, rest) = quoted.split_last().expect("two names or more");
    let list = format!("{} and {last}", rest.join(", "));
    let (first, second) = (names[0], names[1]);
    let all = if names.len() == 2 { "both" } else { "all" };
    format!(
        "{list} are {all} `extern __shared__` in this function: every such array starts at the same address, \
         the start of the block's dynamic shared memory, so they overlap (a store to one changes the other). \
         Declare one and carve the others out of it: `T* {second} = (T*)&{first}[count];`, T the other \
         array's type, count the elements of `{first}` before it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(src: &str) -> Vec<Finding> {
        source_findings(Path::new("k/t.cu"), src)
    }

    #[test]
    fn two_extern_shared_arrays_in_one_function_are_a_finding() {
        let aliased = "extern \"C\" __global__ void kv(const float* v, const int* k, float* out) {\n\
                       \x20   extern __shared__ float sv[];\n\
                       \x20   extern __shared__ __align__(16) int sk[];\n\
                       \x20   extern __shared__ int sk[];\n\
                       \x20   sv[0] = v[0]; sk[0] = k[0];\n}\n";
        let f = found(aliased);
        assert_eq!(f.len(), 1, "one finding a function: {f:?}");
        assert_eq!((f[0].file.to_str(), f[0].line), (Some("k/t.cu"), 3));
        assert!(f[0].text.starts_with("`sv` and `sk` are both `extern __shared__` in this function"), "{}", f[0].text);
        assert!(f[0].text.contains("`T* sk = (T*)&sv[count];`"), "{}", f[0].text);
        let one_line = "__global__ void k() { extern __shared__ float a[], b[]; a[0] = b[0]; }\n";
        assert_eq!(found(one_line).len(), 1);
        let three = "__global__ void k() {\n extern __shared__ int s[];\n extern __shared__ int c[];\n extern __shared__ int x[];\n}\n";
        let f = found(three);
        assert_eq!(f.len(), 1);
        assert!(f[0].line == 3 && f[0].text.starts_with("`s`, `c` and `x` are all"), "{f:?}");
        // One array in each of two functions, or one name declared twice: nothing to say.
        let apart = "__global__ void f() { extern __shared__ float a[]; a[0] = 1; }\n\
                     __global__ void g() { extern __shared__ int b[]; if (b[0]) { extern __shared__ int b[]; } }\n";
        assert_eq!(found(apart), []);
    }

    #[test]
    fn a_finding_is_found_by_the_tail_of_its_path() {
        let f = Finding { file: "/home/me/exercises/kernels/kept_test.cu".into(), line: 14, text: "`v` may be read".into() };
        assert!(f.is_in(Path::new("kernels/kept_test.cu")));
        assert!(!f.is_in(Path::new("test.cu")), "whole components only");
        assert_eq!(f.located(), "/home/me/exercises/kernels/kept_test.cu:14: `v` may be read");
        let bare = Finding { file: "bare_test.cu".into(), line: 2, text: "bare".into() };
        assert!(bare.is_in(Path::new("kernels/ch01/bare_test.cu")));
    }
}
