//! What the compilers said of a kernel that most likely explains wrong numbers: a local read
//! before anything was stored to it (`float sum;` then `sum += ...`). Neither a GPU nor the
//! emulator's checks see one at run time. The emulator's check mode keeps g++'s warnings
//! (`gpubook_emu::compiler_warnings`); NVRTC's "used before its value is set" is kept with them.
//! Graders add both to a failure's report.

use std::path::Path;

/// Every warning this process's compiles gave for `file` (either path may be the other's tail:
/// `kernels/ch05/row_sums.cu`), one sentence each: the emulator's findings and NVRTC's.
pub use gpubook_emu::compiler_warnings;

/// Keeps the "used before its value is set" warnings of a successful NVRTC compile, beside the
/// emulator's findings. Its log reads
/// `row_sums.cu(31): warning #549-D: variable "sum" is used before its value is set`.
pub(crate) fn note_nvrtc_log(log: &str) {
    for line in log.lines().filter(|l| l.contains("is used before its value is set")) {
        let Some((file, rest)) = line.split_once('(') else { continue };
        let Some(line_no) = rest.split_once(')').and_then(|(n, _)| n.parse().ok()) else { continue };
        let Some(variable) = line.split('"').nth(1) else { continue };
        let text = format!(
            "the local variable `{variable}` is read before anything is stored to it (NVRTC's warning #549); \
             give it a first value where it is declared"
        );
        gpubook_emu::note_finding(Path::new(file), line_no, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_warnings_of_a_local_are_kept_once_by_file() {
        let log = "exercises/kernels/nvrtc_kept.cu(31): warning #549-D: variable \"sum\" is used before its value is set\n\
                   \x20     out[i] = sum;\n\nexercises/kernels/nvrtc_kept.cu(9): warning #177-D: variable \"k\" was declared but never referenced\n\
                   Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n";
        note_nvrtc_log(log);
        note_nvrtc_log(log);
        let got = compiler_warnings(Path::new("kernels/nvrtc_kept.cu"));
        assert_eq!(
            got,
            ["exercises/kernels/nvrtc_kept.cu:31: the local variable `sum` is read before anything is stored to it (NVRTC's \
              warning #549); give it a first value where it is declared"]
        );
        assert!(compiler_warnings(Path::new("kept.cu")).is_empty());
    }
}
