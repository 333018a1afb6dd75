//! Locals read before anything was stored to them (`float sum; sum += x;`). The worker cannot
//! see these: a local lives in a register or on the fiber's stack, not in device or shared
//! memory. Check mode does two things instead:
//! - it fills every local that has no initialiser with a pattern (`-ftrivial-auto-var-init=pattern`,
//!   bytes 0xFE: a float is -1.7e38, an int -16843010, a pointer points nowhere), so the wrong
//!   numbers are the same on every run and plainly wrong, like the 0xFF poison of device memory;
//! - it keeps what the compiler's flow analysis says of them (g++'s `-Wuninitialized` and
//!   `-Wmaybe-uninitialized`, clang's `-Wuninitialized` and `-Wsometimes-uninitialized`): build
//!   findings (gpubook-cudac's findings.rs) on the module, which graders add to a failure's report.
//!
//! Not a launch failure: the compiler's "maybe" has false positives (a maximum seeded by the
//! first iteration), and with the pattern in place even a certain read is reported as a maybe.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use gpubook_cudac::Finding;

pub(crate) const PATTERN_INIT: &str = "-ftrivial-auto-var-init=pattern";

/// One read the compiler reported, in the learner's code (never in the runtime's headers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UninitializedUse {
    pub file: PathBuf,
    pub line: u32,
    pub variable: String,
    /// On every path to the line (not only some).
    pub definite: bool,
}

/// Check mode's flags: the warnings (g++'s or clang's), and the pattern where the compiler has it.
pub(crate) fn flags(clang: bool, pattern_init: bool) -> Vec<&'static str> {
    let mut flags =
        if clang { vec!["-Wuninitialized", "-Wsometimes-uninitialized"] } else { vec!["-Wuninitialized", "-Wmaybe-uninitialized"] };
    if pattern_init {
        flags.push(PATTERN_INIT);
    }
    flags
}

/// The uses in a compiler's stderr. `runtime_dir` and system headers are not the learner's.
pub(crate) fn parse(log: &str, runtime_dir: &Path) -> Vec<UninitializedUse> {
    let mut uses = Vec::new();
    for line in log.lines() {
        let Some((loc, message)) = line.split_once(": warning: ") else { continue };
        let definite = if message.ends_with("[-Wuninitialized]") {
            true
        } else if message.ends_with("[-Wmaybe-uninitialized]") || message.ends_with("[-Wsometimes-uninitialized]") {
            false
        } else {
            continue;
        };
        let mut parts = loc.rsplitn(3, ':');
        let (_column, line_no, file) = (parts.next(), parts.next(), parts.next());
        let (Some(file), Some(Ok(line_no))) = (file, line_no.map(str::parse::<u32>)) else { continue };
        let file = PathBuf::from(file);
        if file.starts_with(runtime_dir) || file.starts_with("/usr/") {
            continue;
        }
        let Some(variable) = quoted(message) else { continue };
        uses.push(UninitializedUse { file, line: line_no, variable: unqualified(variable), definite });
    }
    uses
}

impl UninitializedUse {
    /// As a build finding, kept on the module.
    pub(crate) fn finding(&self) -> Finding {
        let text = format!(
            "the local variable `{}` {} before anything is stored to it; check mode fills such a variable \
             with bytes 0xFE (a float reads -1.7e38, an int -16843010). Give it a first value where it is declared.",
            self.variable,
            if self.definite { "is read" } else { "may be read (on a path the compiler found)" }
        );
        Finding { file: self.file.clone(), line: self.line, text }
    }
}

/// The text between the first pair of quotes (g++'s ‘...’ or plain '...').
fn quoted(text: &str) -> Option<&str> {
    let start = text.find(['‘', '\''])?;
    let open = text[start..].chars().next()?.len_utf8();
    let rest = &text[start + open..];
    let end = rest.find(['’', '\''])?;
    Some(&rest[..end])
}

/// `s.S::b` → `s.b`: g++ names a member with its class.
fn unqualified(variable: &str) -> String {
    variable.split('.').map(|part| part.rsplit("::").next().unwrap_or(part)).collect::<Vec<_>>().join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GCC: &str = "\
kernels/dot.cu: In function ‘void dot8(const float*, float*)’:
kernels/dot.cu:5:37: warning: ‘acc’ is used uninitialized [-Wuninitialized]
    5 |     for (int k = 0; k < 8; ++k) acc += in[threadIdx.x * 8 + k];
kernels/dot.cu:4:11: note: ‘acc’ was declared here
kernels/dot.cu:14:16: warning: ‘v’ may be used uninitialized [-Wmaybe-uninitialized]
kernels/dot.cu:24:22: warning: 's.S::b' is used uninitialized [-Wuninitialized]
/rt/device/warp.h:3:1: warning: ‘x’ is used uninitialized [-Wuninitialized]
/usr/include/c++/12/bits/stl_algobase.h:3:1: warning: ‘y’ may be used uninitialized [-Wmaybe-uninitialized]
kernels/dot.cu:40:1: warning: unused variable ‘y’ [-Wunused-variable]
k.cu:7:5: warning: variable 'sum' is uninitialized when used here [-Wuninitialized]
";

    #[test]
    fn reads_the_learners_warnings_of_gcc_and_clang_and_skips_the_runtime() {
        let uses = parse(GCC, Path::new("/rt"));
        let got: Vec<_> = uses.iter().map(|u| (u.file.to_str().unwrap(), u.line, u.variable.as_str(), u.definite)).collect();
        assert_eq!(
            got,
            [
                ("kernels/dot.cu", 5, "acc", true),
                ("kernels/dot.cu", 14, "v", false),
                ("kernels/dot.cu", 24, "s.b", true),
                ("k.cu", 7, "sum", true)
            ]
        );
    }

    #[test]
    fn a_finding_says_whether_the_read_is_certain() {
        let uses = parse(GCC, Path::new("/rt"));
        assert!(uses[0].finding().text.starts_with("the local variable `acc` is read before"), "{:?}", uses[0]);
        assert!(uses[1].finding().text.starts_with("the local variable `v` may be read (on a path"), "{:?}", uses[1]);
    }
}
