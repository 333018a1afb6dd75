//! Where the CUDA toolkit's headers are, for NVRTC.
//!
//! NVRTC compiles with no include path of its own: a kernel that includes `cuda_fp16.h`,
//! `cuda_bf16.h` or `cooperative_groups.h` fails with "cannot open source file" unless it is
//! told where the toolkit keeps them. They are looked for, in this order, in
//! `GPUBOOK_CUDA_INCLUDE`, `$CUDA_HOME/include`, `$CUDA_PATH/include`, `$CUDA_ROOT/include`,
//! beside the NVRTC library this process loaded (`<lib>/../include`, and the include folders of
//! the pip-installed NVIDIA packages next to it), in the pip NVIDIA packages of the Python
//! environments on the usual paths, in `/usr/local/cuda/include` and `/usr/local/cuda-*/include`
//! (newest first), `/opt/cuda/include` and `/usr/include`. A folder counts when it holds
//! `cuda_fp16.h`; its `cccl/` subfolder (CUDA 13 moved libcu++'s `<nv/target>` there) is passed too.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The header that marks a toolkit include folder.
const MARKER: &str = "cuda_fp16.h";

/// Headers NVRTC finds only through the toolkit's include folder (or their folders).
const TOOLKIT_HEADERS: &[&str] = &[
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_fp8.h",
    "cooperative_groups",
    "mma.h",
    "cuda/",
    "cub/",
    "thrust/",
    "curand_kernel.h",
    "cuda_pipeline.h",
    "cuda_awbarrier.h",
];

/// The toolkit's include folders found (first the one holding the headers, then `cccl/`), or
/// where they were looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitHeaders {
    pub dirs: Vec<PathBuf>,
    /// How the first folder was found (`CUDA_HOME`, `beside libnvrtc`, ...).
    pub found_by: String,
}

/// Looked up once per process.
pub fn toolkit_headers() -> Result<ToolkitHeaders, String> {
    static FOUND: OnceLock<Result<ToolkitHeaders, String>> = OnceLock::new();
    FOUND.get_or_init(find).clone()
}

fn find() -> Result<ToolkitHeaders, String> {
    let mut looked = Vec::new();
    for (why, dir) in candidates() {
        if dir.join(MARKER).is_file() {
            let mut dirs = vec![dir.clone()];
            let cccl = dir.join("cccl");
            if cccl.is_dir() {
                dirs.push(cccl);
            }
            return Ok(ToolkitHeaders { dirs, found_by: why });
        }
        looked.push(format!("{} ({why})", dir.display()));
    }
    Err(format!(
        "the CUDA toolkit's headers ({MARKER} and friends) were not found; looked in: {}. Set CUDA_HOME \
         to the toolkit (the folder with include/{MARKER}), or install them (pip install \
         nvidia-cuda-runtime-cu12, or the toolkit's cuda-cudart-dev package)",
        if looked.is_empty() { "nowhere (no candidate folder exists)".to_string() } else { looked.join(", ") }
    ))
}

/// Every folder that may hold the headers, with how it was found; only existing folders.
fn candidates() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    if let Some(v) = std::env::var_os("GPUBOOK_CUDA_INCLUDE") {
        out.push(("GPUBOOK_CUDA_INCLUDE".into(), PathBuf::from(v)));
    }
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(v) = std::env::var_os(var) {
            out.push((var.into(), PathBuf::from(v).join("include")));
        }
    }
    if let Some(lib) = loaded_nvrtc() {
        for dir in beside_library(&lib) {
            out.push((format!("beside {}", lib.display()), dir));
        }
    }
    for site in python_site_dirs() {
        for dir in pip_nvidia_includes(&site.join("nvidia")) {
            out.push(("pip NVIDIA package".into(), dir));
        }
    }
    out.push(("/usr/local/cuda".into(), "/usr/local/cuda/include".into()));
    let mut versioned: Vec<PathBuf> = glob_dirs(Path::new("/usr/local"), |n| n.starts_with("cuda-"));
    versioned.sort_by_key(|p| std::cmp::Reverse(version_key(p)));
    out.extend(versioned.into_iter().map(|d| ("/usr/local/cuda-*".to_string(), d.join("include"))));
    out.push(("/opt/cuda".into(), "/opt/cuda/include".into()));
    out.push(("system headers".into(), "/usr/include".into()));
    let mut seen = std::collections::HashSet::new();
    out.retain(|(_, d)| d.is_dir() && seen.insert(d.clone()));
    out
}

/// The path of the libnvrtc this process has loaded (cudarc loads it at the first NVRTC call).
fn loaded_nvrtc() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains("libnvrtc.so")).map(PathBuf::from)
}

/// `<toolkit>/lib64/libnvrtc.so` → `<toolkit>/include`; `<toolkit>/targets/x86_64-linux/lib` →
/// its `../include`; a pip package's `nvidia/cuda_nvrtc/lib` → every `nvidia/*/include`.
fn beside_library(lib: &Path) -> Vec<PathBuf> {
    let Some(lib_dir) = lib.parent() else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(up) = lib_dir.parent() {
        out.push(up.join("include"));
        if let Some(nvidia) = up.parent().filter(|p| p.file_name().is_some_and(|n| n == "nvidia")) {
            out.extend(pip_nvidia_includes(nvidia));
        }
    }
    out
}

/// The include folders of the pip packages under `site-packages/nvidia/` (`cuda_runtime/include`,
/// `cu13/include`, ...).
fn pip_nvidia_includes(nvidia: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = glob_dirs(nvidia, |_| true).into_iter().map(|d| d.join("include")).collect();
    // The runtime package holds the headers kernels include; look there first.
    dirs.sort_by_key(|d| !d.to_string_lossy().contains("runtime"));
    dirs
}

/// site-packages / dist-packages of the active virtual environment, conda, the user and the system.
fn python_site_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = std::env::var_os(var) {
            roots.push(PathBuf::from(v).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(PathBuf::from(home).join(".local/lib"));
    }
    roots.extend(["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].map(PathBuf::from));
    let mut out = Vec::new();
    for root in roots {
        for py in glob_dirs(&root, |n| n.starts_with("python3")) {
            out.push(py.join("site-packages"));
            out.push(py.join("dist-packages"));
        }
    }
    out
}

fn glob_dirs(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().filter(|e| e.file_name().to_str().is_some_and(&keep)).map(|e| e.path()).filter(|p| p.is_dir()).collect()
}

/// `cuda-12.10` → (12, 10), so 12.10 sorts after 12.9.
fn version_key(p: &Path) -> Vec<u32> {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.trim_start_matches("cuda-").split('.').map(|x| x.parse().unwrap_or(0)).collect()
}

/// The first `#include` of `text` that only the toolkit's headers provide, with its line.
pub fn toolkit_include(text: &str) -> Option<(String, u32)> {
    for (n, line) in text.lines().enumerate() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("include")) else { continue };
        let rest = rest.trim();
        let header =
            rest.strip_prefix('<').and_then(|r| r.split('>').next()).or_else(|| rest.strip_prefix('"').and_then(|r| r.split('"').next()));
        if let Some(h) = header.map(str::trim)
            && TOOLKIT_HEADERS.iter().any(|t| h.starts_with(t))
        {
            return Some((h.to_string(), n as u32 + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolkit_includes_are_recognised() {
        let src = "#include <stdint.h>\n#include \"mine.cuh\"\n  #  include <cooperative_groups/reduce.h>\n";
        assert_eq!(toolkit_include(src), Some(("cooperative_groups/reduce.h".into(), 3)));
        assert_eq!(toolkit_include("#include <cuda_fp16.h>"), Some(("cuda_fp16.h".into(), 1)));
        assert_eq!(toolkit_include("#include \"helpers.cuh\"\n// #include <cuda_fp16.h> is in a comment? no: a line\n"), None);
    }

    #[test]
    fn a_folder_beside_the_library_and_in_a_fake_toolkit_is_found() {
        let root = std::env::temp_dir().join(format!("gpubook-toolkit-{}", std::process::id()));
        let pip = root.join("site/nvidia");
        std::fs::create_dir_all(pip.join("cuda_nvrtc/lib")).unwrap();
        std::fs::create_dir_all(pip.join("cuda_runtime/include")).unwrap();
        let found = beside_library(&pip.join("cuda_nvrtc/lib/libnvrtc.so.12"));
        assert_eq!(found[0], pip.join("cuda_nvrtc/include"));
        assert!(found.contains(&pip.join("cuda_runtime/include")), "{found:?}");
        assert_eq!(found.iter().position(|d| d.ends_with("cuda_runtime/include")), Some(1), "runtime first: {found:?}");
        assert!(version_key(Path::new("/usr/local/cuda-12.10")) > version_key(Path::new("/usr/local/cuda-12.9")));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_missing_toolkit_says_where_it_looked() {
        // This machine has no CUDA toolkit; where one exists the result is a folder with the marker.
        match find() {
            Ok(h) => assert!(h.dirs[0].join(MARKER).is_file()),
            Err(e) => assert!(e.contains("CUDA_HOME") && e.contains("looked in"), "{e}"),
        }
    }
}
