//! What NVRTC said of a kernel that most likely explains wrong numbers: a local read before
//! anything was stored to it (`float sum;` then `sum += ...`). Neither a GPU nor the emulator's
//! checks see one at run time. The emulator's check mode has g++'s warnings for the same thing;
//! both become findings on the module (gpubook-cudac's `Finding`), which graders add to a
//! failure's report.

use gpubook_cudac::Finding;
use std::path::PathBuf;

/// The "used before its value is set" warnings of a successful NVRTC compile, whose log reads
/// `row_sums.cu(31): warning #549-D: variable "sum" is used before its value is set`.
pub(crate) fn nvrtc_findings(log: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for line in log.lines().filter(|l| l.contains("is used before its value is set")) {
        let Some((file, rest)) = line.split_once('(') else { continue };
        let Some(line_no) = rest.split_once(')').and_then(|(n, _)| n.parse().ok()) else { continue };
        let Some(variable) = line.split('"').nth(1) else { continue };
        let text = format!(
            "the local variable `{variable}` is read before anything is stored to it (NVRTC's warning #549); \
             give it a first value where it is declared"
        );
        let f = Finding { file: PathBuf::from(file), line: line_no, text };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn nvrtc_warnings_of_a_local_become_findings() {
        let log = "exercises/kernels/nvrtc_kept.cu(31): warning #549-D: variable \"sum\" is used before its value is set\n\
                   \x20     out[i] = sum;\n\nexercises/kernels/nvrtc_kept.cu(9): warning #177-D: variable \"k\" was declared but never referenced\n\
                   Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n";
        let got = nvrtc_findings(log);
        assert_eq!(
            got.iter().map(Finding::located).collect::<Vec<_>>(),
            ["exercises/kernels/nvrtc_kept.cu:31: the local variable `sum` is read before anything is stored to it (NVRTC's \
              warning #549); give it a first value where it is declared"]
        );
        assert!(got[0].is_in(Path::new("kernels/nvrtc_kept.cu")));
        assert!(!got[0].is_in(Path::new("kept.cu")));
    }
}
