//! Kernel sources: where a module's CUDA C comes from (`Source`), and the text read and parsed
//! (`KernelSource`), which is what a backend compiles. `function.rs` turns them into modules.
//!
//! The same .cu text goes to NVRTC on a GPU and to the emulator's C++ build on a CPU. The kernel
//! signatures are parsed here once, so a launch's arguments are checked against the parameters
//! (count, pointer or scalar, element type, size) before either backend sees them.

use super::error::{GpuError, Result};
use gpubook_cudac::KernelSignature;
use std::path::{Path, PathBuf};

/// Where a kernel's CUDA C comes from.
#[derive(Debug, Clone)]
pub struct Source {
    origin: Origin,
    include_dirs: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
enum Origin {
    File(PathBuf),
    Text { name: String, text: String },
}

impl Source {
    /// A .cu file; its folder is on the include path. Read when the module is loaded.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut include_dirs = vec![library_include_dir()];
        if let Some(dir) = path.parent() {
            include_dirs.insert(0, dir.to_path_buf());
        }
        Source { origin: Origin::File(path), include_dirs }
    }

    /// A file of gpubook's own `kernels/` folder (bench, demos, viz), e.g. `"bench/vector_add.cu"`.
    pub fn library(rel: &str) -> Self {
        Self::file(crate::paths::library_kernel(rel))
    }

    /// CUDA C held in a string; `name` is what messages call it (e.g. "vector_add.cu").
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Source { origin: Origin::Text { name: name.into(), text: text.into() }, include_dirs: vec![library_include_dir()] }
    }

    /// Adds a folder to the `#include "..."` search path.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Reads the text (a file's through `replaced`: (path suffix, text) pairs that stand in
    /// for files, see [`Gpu::read_kernel_file_as`](super::Gpu::read_kernel_file_as)) and parses
    /// its kernels.
    pub(crate) fn read(&self, replaced: &[(String, String)]) -> Result<KernelSource> {
        let replacement = |p: &Path| replaced.iter().rev().find(|(suffix, _)| p.ends_with(suffix)).map(|(_, t)| t.clone());
        let (path, text) = match &self.origin {
            Origin::File(p) if let Some(text) = replacement(p) => (p.clone(), text),
            Origin::File(p) => {
                let p = &crate::paths::relocate(p);
                let text = std::fs::read_to_string(p)
                    .map_err(|source| GpuError::Io { context: format!("reading kernel source {}", p.display()), source })?;
                (p.clone(), text)
            }
            Origin::Text { name, text } => (PathBuf::from(name), text.clone()),
        };
        let signatures = gpubook_cudac::parse_kernels(&text);
        let include_dirs = self.include_dirs.iter().map(|d| crate::paths::relocate(d)).collect();
        Ok(KernelSource { path, text, include_dirs, signatures })
    }
}

/// `kernel!("ch03/vector_add.cu")`: a .cu file under the calling crate's `kernels/` folder, found
/// whatever the working directory (`cargo test` runs each crate in its own folder).
#[macro_export]
macro_rules! kernel {
    ($path:literal) => {
        $crate::gpu::Source::file(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $path))
            .include_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"))
    };
}

/// gpubook's own kernels/include: helper headers any kernel may include.
fn library_include_dir() -> PathBuf {
    crate::paths::build_root().join("kernels").join("include")
}

/// A source read and parsed, ready for a backend.
#[derive(Debug, Clone)]
pub struct KernelSource {
    pub path: PathBuf,
    pub text: String,
    pub include_dirs: Vec<PathBuf>,
    pub signatures: Vec<KernelSignature>,
}

impl KernelSource {
    /// The path as a learner would write it: relative to the working directory's workspace when
    /// it lies below it.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }

    pub fn kernel_names(&self) -> Vec<String> {
        self.signatures.iter().map(|s| s.name.clone()).collect()
    }
}

pub(crate) fn display_path(path: &Path) -> String {
    crate::paths::display(path)
}
