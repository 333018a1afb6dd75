//! The progress record: one small JSON file, `.gpubook/progress.json` at the workspace root, that
//! graders, the CLI, the book and the notebooks all read. Writers take a file lock, since tests
//! run in parallel.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    NotStarted,
    Failing,
    Passed,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Entry {
    pub status: Status,
    pub attempts: u32,
    /// How many hints `gpubook hint` has shown.
    pub hints_shown: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Progress {
    pub exercises: BTreeMap<String, Entry>,
}

/// Exercise ids from before chapters 5 and 6 were inserted (old chapters 5-9 are now 7-11): a
/// record written then keeps its progress under the new ids.
const RENAMED: &[(&str, &str)] = &[
    ("ch05-three-streams", "ch07-three-streams"),
    ("ch06-ping-pong", "ch08-ping-pong"),
    ("ch06-ll-buffers", "ch08-ll-buffers"),
    ("ch07-zero-copy-combine", "ch09-zero-copy-combine"),
    ("ch07-expert-counts", "ch09-expert-counts"),
    ("ch08-bubbles", "ch10-bubbles"),
    ("ch08-one-f-one-b", "ch10-one-f-one-b"),
    ("ch09-dualpipe", "ch11-dualpipe"),
    ("ch09-chunk-pair", "ch11-chunk-pair"),
];

impl Progress {
    fn migrate(&mut self) {
        for (old, new) in RENAMED {
            if let Some(entry) = self.exercises.remove(*old) {
                self.exercises.entry(new.to_string()).or_insert(entry);
            }
        }
    }

    pub fn path(root: &Path) -> PathBuf {
        root.join(".gpubook").join("progress.json")
    }

    /// Reads the record (an empty one when there is none yet).
    pub fn load(root: &Path) -> Progress {
        let mut progress: Progress =
            std::fs::read_to_string(Self::path(root)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        progress.migrate();
        progress
    }

    pub fn entry(&self, id: &str) -> Entry {
        self.exercises.get(id).cloned().unwrap_or_default()
    }

    /// Changes one exercise's entry under the file lock.
    pub fn update(root: &Path, id: &str, change: impl FnOnce(&mut Entry)) -> std::io::Result<Entry> {
        let path = Self::path(root);
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        file.lock()?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let mut progress: Progress = serde_json::from_str(&text).unwrap_or_default();
        progress.migrate();
        let entry = progress.exercises.entry(id.to_string()).or_default();
        change(entry);
        let entry = entry.clone();
        let json = serde_json::to_string_pretty(&progress).map_err(std::io::Error::other)?;
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(json.as_bytes())?;
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_ids_keep_their_progress() {
        let mut p: Progress =
            serde_json::from_str(r#"{"exercises":{"ch05-three-streams":{"status":"passed","attempts":3,"hints_shown":1}}}"#).unwrap();
        p.migrate();
        assert_eq!(p.entry("ch07-three-streams").status, Status::Passed);
        assert!(!p.exercises.contains_key("ch05-three-streams"));
    }
}
