//! The progress record: one small JSON file, `.gpubook/progress.json` at the workspace root.
//! Everything reads it; only runners write it (`gpubook check`/`watch`/`hint`/`reset`, the book's
//! Check button, a notebook's check), from the grader's typed report, never from printed text.
//! Deleting `.gpubook/` loses nothing but progress. Writers take a file lock.
//!
//! A pass is kept with a fingerprint of the exercise's files: when they change, the exercise is
//! `Stale` (shown, and checked again) until the next run says what it is now.

use crate::catalog::Exercise;
use crate::grade::GradeReport;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// What the last run said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    NotStarted,
    Failing,
    Passed,
}

/// Where an exercise stands now: the last run's status, unless the files changed since a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    NotStarted,
    Failing,
    Passed,
    /// It passed, and its files have changed since: not counted until it is checked again.
    Stale,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Entry {
    pub status: Status,
    pub attempts: u32,
    /// How many hints `gpubook hint` has shown.
    pub hints_shown: u32,
    /// The fingerprint of the exercise's files when it last passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_with: Option<String>,
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

/// A fingerprint of the learner's files of `ex` (under `exercises/`), as they are now. A file
/// that cannot be read counts as its error, so it differs from any pass.
pub fn fingerprint(root: &Path, ex: &Exercise) -> String {
    let mut h = Sha256::new();
    for file in &ex.files {
        h.update(file.as_bytes());
        h.update([0]);
        match std::fs::read(root.join("exercises").join(file)) {
            Ok(bytes) => h.update(&bytes),
            Err(e) => h.update(e.to_string().as_bytes()),
        }
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Progress {
    pub fn path(root: &Path) -> PathBuf {
        root.join(".gpubook").join("progress.json")
    }

    /// Reads the record (an empty one when there is none yet, or it cannot be read).
    pub fn load(root: &Path) -> Progress {
        let mut progress: Progress =
            std::fs::read_to_string(Self::path(root)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        progress.migrate();
        progress
    }

    pub fn entry(&self, id: &str) -> Entry {
        self.exercises.get(id).cloned().unwrap_or_default()
    }

    /// Where `ex` stands, given the fingerprint of its files now.
    pub fn standing_with(&self, ex: &Exercise, fingerprint: &str) -> Standing {
        let e = self.entry(&ex.id);
        match e.status {
            Status::NotStarted => Standing::NotStarted,
            Status::Failing => Standing::Failing,
            Status::Passed if e.passed_with.as_deref() == Some(fingerprint) => Standing::Passed,
            Status::Passed => Standing::Stale,
        }
    }

    /// Where `ex` stands, reading its files under `root`.
    pub fn standing(&self, root: &Path, ex: &Exercise) -> Standing {
        self.standing_with(ex, &fingerprint(root, ex))
    }

    /// Records a grader's report on the learner's files, which had `fingerprint` when it ran. The
    /// latest run wins: a regression clears a pass. Reports on any other crate's answers (the
    /// solutions, wrong answers kept as tests) are not the learner's and change nothing.
    pub fn record(root: &Path, report: &GradeReport, fingerprint: &str) -> std::io::Result<Option<Entry>> {
        if !report.is_the_learners() {
            return Ok(None);
        }
        Self::update(root, &report.id, |e| {
            e.attempts += 1;
            if report.passed {
                e.status = Status::Passed;
                e.passed_with = Some(fingerprint.to_string());
            } else {
                e.status = Status::Failing;
                e.passed_with = None;
            }
        })
        .map(Some)
    }

    /// Records a report on answers written outside the learner's files (a notebook's cells): a pass
    /// counts like any other, but a failure does not clear a pass of the files in exercises/
    /// (running a chapter's notebook runs its stubs' checks too). Returns the entry and whether
    /// the pass was kept.
    pub fn record_from_notebook(root: &Path, report: &GradeReport, fingerprint: &str) -> std::io::Result<(Option<Entry>, bool)> {
        if report.is_the_learners() && !report.passed && Self::load(root).entry(&report.id).passed_with.as_deref() == Some(fingerprint) {
            return Self::update(root, &report.id, |e| e.attempts += 1).map(|e| (Some(e), true));
        }
        Self::record(root, report, fingerprint).map(|e| (e, false))
    }

    /// Records a run that never produced a report (the code did not compile, the process died).
    pub fn record_failing(root: &Path, id: &str) -> std::io::Result<Entry> {
        Self::update(root, id, |e| {
            e.attempts += 1;
            e.status = Status::Failing;
            e.passed_with = None;
        })
    }

    /// One more hint shown, of `total`; also says whether there was one more to show.
    pub fn record_hint(root: &Path, id: &str, total: u32) -> std::io::Result<(Entry, bool)> {
        let mut new = false;
        let entry = Self::update(root, id, |e| {
            new = e.hints_shown < total;
            e.hints_shown = (e.hints_shown + 1).min(total);
        })?;
        Ok((entry, new))
    }

    /// The exercise starts over: its files were put back, so its pass no longer stands.
    pub fn record_reset(root: &Path, id: &str) -> std::io::Result<Entry> {
        Self::update(root, id, |e| {
            e.status = Status::NotStarted;
            e.passed_with = None;
        })
    }

    fn migrate(&mut self) {
        for (old, new) in RENAMED {
            if let Some(entry) = self.exercises.remove(*old) {
                self.exercises.entry(new.to_string()).or_insert(entry);
            }
        }
    }

    /// Changes one exercise's entry under the file lock.
    fn update(root: &Path, id: &str, change: impl FnOnce(&mut Entry)) -> std::io::Result<Entry> {
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

    fn report(id: &str, passed: bool, krate: &str) -> GradeReport {
        GradeReport {
            id: id.into(),
            passed,
            failure: (!passed).then(|| crate::grade::Failure::new("no")),
            test: "ch03".into(),
            function: "f".into(),
            seed: 1,
            backend: "emulator".into(),
            graded_crate: Some(krate.into()),
            skipped_checks: vec![],
            took_ms: 1,
        }
    }

    fn exercise(id: &str) -> Exercise {
        toml::from_str(&format!(
            "id = \"{id}\"\nchapter = 3\ntitle = \"t\"\nfiles = [\"src/a.rs\"]\ntest = \"ch03\"\nfunction = \"f\"\nconcepts = []\nhints = [\"h\"]\n"
        ))
        .unwrap()
    }

    #[test]
    fn old_ids_keep_their_progress() {
        let mut p: Progress =
            serde_json::from_str(r#"{"exercises":{"ch05-three-streams":{"status":"passed","attempts":3,"hints_shown":1}}}"#).unwrap();
        p.migrate();
        assert_eq!(p.entry("ch07-three-streams").status, Status::Passed);
        assert!(!p.exercises.contains_key("ch05-three-streams"));
    }

    #[test]
    fn the_latest_run_wins_and_only_the_learners_runs_count() {
        let dir = std::env::temp_dir().join(format!("gpubook-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ex = exercise("ch03-a");
        assert!(Progress::record(&dir, &report("ch03-a", true, "solutions"), "fp").unwrap().is_none());
        assert_eq!(Progress::load(&dir).standing_with(&ex, "fp"), Standing::NotStarted);
        Progress::record(&dir, &report("ch03-a", true, "exercises"), "fp").unwrap();
        assert_eq!(Progress::load(&dir).standing_with(&ex, "fp"), Standing::Passed);
        assert_eq!(Progress::load(&dir).standing_with(&ex, "edited"), Standing::Stale);
        Progress::record(&dir, &report("ch03-a", false, "exercises"), "fp").unwrap();
        assert_eq!(Progress::load(&dir).standing_with(&ex, "fp"), Standing::Failing, "a regression clears the pass");
        Progress::record(&dir, &report("ch03-a", true, "exercises"), "fp").unwrap();
        Progress::record_reset(&dir, "ch03-a").unwrap();
        assert_eq!(Progress::load(&dir).standing_with(&ex, "fp"), Standing::NotStarted);
        assert_eq!(Progress::load(&dir).entry("ch03-a").attempts, 3);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
