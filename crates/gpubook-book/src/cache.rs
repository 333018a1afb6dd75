//! Figure outputs cached by content, so a warm build runs nothing. An entry's key covers the
//! marker's text, the backend a device figure would run on, and a fingerprint of every source
//! that could change an output (the figure code, the GPU API, the emulator, the simulator, the
//! kernels): edit any of them and the next build runs the figures again.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What the outputs depend on besides the marker, relative to the workspace root.
const SOURCES: &[&str] = &[
    "crates/gpubook/src",
    "crates/gpubook-book/src",
    "crates/gpubook-course/src",
    "crates/gpubook-cudac/src",
    "crates/gpubook-emu/src",
    "crates/gpubook-labs/src",
    "crates/gpubook-emu/runtime",
    "crates/gpubook-sim/src",
    "kernels",
];

pub struct Cache {
    dir: PathBuf,
    fingerprint: [u8; 32],
    enabled: bool,
}

impl Cache {
    /// A cache in `dir`; `enabled: false` still writes entries but never reads them.
    pub fn new(dir: PathBuf, root: &Path, enabled: bool) -> Cache {
        Cache { dir, fingerprint: fingerprint(root), enabled }
    }

    /// The entry name for a marker; `backend` is set for markers that run on a device.
    pub fn key(&self, marker: &str, backend: Option<&str>) -> String {
        let mut h = Sha256::new();
        h.update(self.fingerprint);
        for part in [marker, backend.unwrap_or("-"), env!("CARGO_PKG_VERSION")] {
            field(&mut h, part.as_bytes());
        }
        // 128 bits name an entry as surely as 256, in half the file name.
        h.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn get(&self, key: &str) -> Option<String> {
        if !self.enabled {
            return None;
        }
        std::fs::read_to_string(self.dir.join(format!("{key}.html"))).ok()
    }

    /// Stores an entry (a failure only costs the next build some time, so it is ignored).
    pub fn put(&self, key: &str, html: &str) {
        let path = self.dir.join(format!("{key}.html"));
        let tmp = self.dir.join(format!("{key}.tmp{}", std::process::id()));
        let _ = std::fs::create_dir_all(&self.dir).and_then(|_| std::fs::write(&tmp, html)).and_then(|_| std::fs::rename(&tmp, &path));
    }
}

/// A SHA-256 of the paths and contents of every file under [`SOURCES`], in a fixed order. SHA-256
/// is the same on every machine and Rust release, so a toolchain upgrade keeps the cache warm
/// (std's DefaultHasher promises neither).
fn fingerprint(root: &Path) -> [u8; 32] {
    let mut h = Sha256::new();
    for s in SOURCES {
        let files = walkdir::WalkDir::new(root.join(s)).sort_by_file_name().into_iter().flatten();
        for f in files.filter(|e| e.file_type().is_file()) {
            let rel = f.path().strip_prefix(root).unwrap_or(f.path());
            field(&mut h, rel.to_string_lossy().as_bytes());
            field(&mut h, &std::fs::read(f.path()).unwrap_or_default());
        }
    }
    h.finalize().into()
}

/// Feeds one field, its length first, so that no two different lists of fields hash alike.
fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The backend a device figure would run on now, without opening a device: `Gpu::new`'s own
/// choice. (An unusable `GPUBOOK_BACKEND` keys as the emulator; the figure's run reports it.)
pub fn backend_now() -> String {
    use gpubook::gpu::{BackendKind, resolve_backend};
    resolve_backend().map_or(BackendKind::Emulator, |choice| choice.kind).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_edit_changes_the_key() {
        let root = std::env::temp_dir().join(format!("gpubook-cache-test-{}", std::process::id()));
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::write(root.join("kernels/a.cu"), "one").unwrap();
        let key = |root: &Path| Cache::new(root.join("cache"), root, true).key("figure launch n=8", None);
        let before = key(&root);
        assert_eq!(before, key(&root));
        std::fs::write(root.join("kernels/a.cu"), "two").unwrap();
        assert_ne!(before, key(&root));
        let cache = Cache::new(root.join("cache"), &root, true);
        cache.put("k", "<p>hi</p>");
        assert_eq!(cache.get("k").as_deref(), Some("<p>hi</p>"));
        assert_eq!(Cache::new(root.join("cache"), &root, false).get("k"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
