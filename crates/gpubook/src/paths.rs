//! Where things are: the one place for the workspace root, for moving build-time paths to the
//! machine a binary runs on, and for showing a path to a learner.
//!
//! Paths baked in at compile time (`kernel!`, gpubook's own kernels) name the build machine's
//! checkout. Test binaries built here and run elsewhere (the GPU script does that) find the same
//! files under the run-time root instead.

use std::path::{Path, PathBuf};

/// The workspace root this library was built in (two folders above `crates/gpubook`).
pub fn build_root() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().and_then(Path::parent).unwrap_or(manifest)
}

/// The workspace root: `GPUBOOK_ROOT`, else the nearest folder above the working directory with an
/// `exercises.toml`, else the root gpubook was built in.
pub fn root() -> PathBuf {
    if let Some(r) = std::env::var_os("GPUBOOK_ROOT") {
        return PathBuf::from(r);
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Some(dir) = cwd.ancestors().find(|d| d.join("exercises.toml").is_file())
    {
        return dir.to_path_buf();
    }
    build_root().to_path_buf()
}

/// A build-time path as it is on this machine: unchanged when it exists, else the same path
/// below the run-time root (or the working directory).
pub fn relocate(path: &Path) -> PathBuf {
    if path.exists() {
        return path.to_path_buf();
    }
    let Ok(rel) = path.strip_prefix(build_root()) else { return path.to_path_buf() };
    let roots = std::env::var_os("GPUBOOK_ROOT").map(PathBuf::from).into_iter().chain([root()]).chain(std::env::current_dir().ok());
    roots.map(|r| r.join(rel)).find(|p| p.exists()).unwrap_or_else(|| path.to_path_buf())
}

/// A file of gpubook's own `kernels/` folder (bench, demos, viz, include), on this machine.
pub fn library_kernel(rel: &str) -> PathBuf {
    relocate(&build_root().join("kernels").join(rel))
}

/// The path as a learner would write it: relative to the workspace root when it lies below it,
/// else as given.
pub fn display(path: &Path) -> String {
    display_from(path, &root())
}

fn display_from(path: &Path, root: &Path) -> String {
    // `/` as the root would turn every absolute path into a relative-looking one.
    if root.is_absolute()
        && root.parent().is_some()
        && let Ok(rel) = path.strip_prefix(root)
        && !rel.as_os_str().is_empty()
    {
        return rel.display().to_string();
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_relative_below_the_root_and_whole_elsewhere() {
        let root = Path::new("/work/book");
        assert_eq!(display_from(Path::new("/work/book/exercises/kernels/a.cu"), root), "exercises/kernels/a.cu");
        assert_eq!(display_from(Path::new("/tmp/a.cu"), root), "/tmp/a.cu");
        // The bug this replaced: with the root's parent being `/`, the leading `/` was dropped.
        assert_eq!(display_from(Path::new("/tmp/a.cu"), Path::new("/work")), "/tmp/a.cu");
        assert_eq!(display_from(Path::new("/tmp/a.cu"), Path::new("/")), "/tmp/a.cu");
        assert_eq!(display_from(Path::new("rel/a.cu"), root), "rel/a.cu");
    }

    #[test]
    fn relocate_moves_build_paths_below_the_root() {
        let missing = build_root().join("no-such-folder-xyz/file.cu");
        assert_eq!(relocate(&missing), missing, "a path found nowhere stays as it was");
        let built = build_root().join("exercises.toml");
        if built.exists() {
            assert_eq!(relocate(&built), built, "a path that exists stays as it is");
        } else {
            // This binary runs from another folder than it was built in (the GPU script does that).
            assert_eq!(relocate(&built), root().join("exercises.toml"), "a build path moves below this machine's root");
        }
    }
}
