//! Finding an up-to-date test binary for an exercise, fast.
//!
//! `cargo test` spends its time in three places: cargo's freshness check of the whole workspace
//! (~0.1-0.5 s here, and minutes when another build holds the target folder's lock), compiling
//! whatever changed, and running the binary. A learner's kernel (.cu) is read at run time, so after
//! editing only the .cu nothing needs compiling: we remember the binary cargo named last time and
//! run it directly while no compile input is newer than that check. Anything else goes through
//! `cargo test --no-run --message-format=json`, which names the binary and reports compile errors.

use super::child;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A test binary, or why there is none.
pub enum Build {
    Ready(PathBuf),
    /// The learner's crate does not compile: cargo's rendered diagnostics.
    Failed(String),
    /// The deadline came before cargo was done.
    TimedOut,
}

/// The binary of `exercises/tests/<test>.rs`, built if needed. `progress` hears what cargo is doing.
pub fn build(root: &Path, test: &str, deadline: Option<Instant>, progress: &mut dyn FnMut(String)) -> anyhow::Result<Build> {
    let mut stamps = Stamps::load(root);
    if let Some(exe) = stamps.fresh(root, test) {
        return Ok(Build::Ready(exe));
    }
    // Taken before cargo starts, so an edit made while it runs is newer and checked again.
    let started = now_ns();
    let build = cargo_no_run(root, test, deadline, progress)?;
    if let Build::Ready(exe) = &build {
        stamps.tests.insert(test.to_string(), Stamp { exe: exe.clone(), checked_ns: started });
        stamps.save(root);
    }
    Ok(build)
}

fn cargo_no_run(root: &Path, test: &str, deadline: Option<Instant>, progress: &mut dyn FnMut(String)) -> anyhow::Result<Build> {
    progress("checking what needs compiling".into());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    // Only this chapter's module: another chapter's file that does not compile cannot stop it.
    cmd.args(["test", "-p", "exercises", "--no-default-features", "--features", test, "--test", test, "--no-run", "--quiet"])
        .arg("--message-format=json-diagnostic-rendered-ansi")
        .current_dir(root);
    let mut exe = None;
    let mut errors = Vec::new();
    let ended = child::run(&mut cmd, deadline, &mut |line| {
        let Ok(msg) = serde_json::from_str::<Message>(line) else { return };
        match msg.reason.as_str() {
            "compiler-artifact" if !msg.fresh => progress(format!("compiling: {} done", msg.target.name)),
            "compiler-message" if msg.message.level == "error" => errors.push(msg.message.rendered),
            _ => {}
        }
        if msg.target.kind.iter().any(|k| k == "test") && msg.target.name == test && msg.executable.is_some() {
            exe = msg.executable;
        }
    })
    .with_context(|| format!("running {} (is Rust installed? https://rustup.rs)", Path::new(&cargo).display()))?;
    let Some(status) = ended.status else { return Ok(Build::TimedOut) };
    match exe {
        Some(exe) if status.success() => Ok(Build::Ready(exe)),
        _ if !errors.is_empty() => Ok(Build::Failed(errors.concat())),
        _ => Ok(Build::Failed(format!("`cargo test -p exercises --test {test}` failed ({status}):\n{}", ended.stderr))),
    }
}

/// The parts of cargo's JSON messages we read.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Message {
    reason: String,
    fresh: bool,
    target: Target,
    executable: Option<PathBuf>,
    message: Diagnostic,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Target {
    name: String,
    kind: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Diagnostic {
    level: String,
    rendered: String,
}

/// What cargo named last time, per test, and when it did: `.gpubook/testbins.json`.
#[derive(Serialize, Deserialize, Default)]
struct Stamps {
    tests: BTreeMap<String, Stamp>,
}

#[derive(Serialize, Deserialize)]
struct Stamp {
    exe: PathBuf,
    /// When cargo last said this binary was up to date (ns since the Unix epoch).
    checked_ns: u128,
}

impl Stamps {
    fn path(root: &Path) -> PathBuf {
        root.join(".gpubook").join("testbins.json")
    }

    fn load(root: &Path) -> Stamps {
        std::fs::read_to_string(Self::path(root)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
    }

    /// A cache, not a record: failing to write it only costs the next check a cargo run.
    fn save(&self, root: &Path) {
        let path = Self::path(root);
        let tmp = path.with_extension("json.tmp");
        let written = std::fs::create_dir_all(path.parent().expect("has a parent")).is_ok()
            && serde_json::to_string_pretty(self).is_ok_and(|json| std::fs::write(&tmp, json).is_ok());
        if written {
            let _ = std::fs::rename(&tmp, &path);
        }
    }

    fn fresh(&self, root: &Path, test: &str) -> Option<PathBuf> {
        if std::env::var_os("GPUBOOK_ALWAYS_CARGO").is_some() {
            return None;
        }
        let stamp = self.tests.get(test)?;
        (stamp.exe.is_file() && newest_input(root)? < stamp.checked_ns).then(|| stamp.exe.clone())
    }
}

/// Folders of the root that cannot change what the exercises' test binary is built from.
/// Everything else counts, so a change anywhere we did not think of costs a cargo run, never a
/// stale binary. exercises/kernels is the point: kernels are read when the test runs.
const NOT_INPUTS: &[&str] =
    &[".git", ".gpubook", "target", "gpu-bin", "book", "docs", "notebooks", "scripts", "solutions", "exercises/kernels"];

/// The newest modification time (ns) of any file that could be a compile input; `None` when
/// the tree cannot be read (then cargo decides).
pub fn newest_input(root: &Path) -> Option<u128> {
    let skip: Vec<PathBuf> = NOT_INPUTS.iter().map(|d| root.join(d)).collect();
    // A cargo target folder under another name (CARGO_TARGET_DIR) is marked by CACHEDIR.TAG.
    let skipped =
        |e: &walkdir::DirEntry| skip.iter().any(|s| s == e.path()) || (e.file_type().is_dir() && e.path().join("CACHEDIR.TAG").exists());
    let mut newest = 0;
    for entry in walkdir::WalkDir::new(root).min_depth(1).into_iter().filter_entry(|e| !skipped(e)) {
        let meta = entry.ok()?.metadata().ok()?;
        // Folders count too: their time changes when a file in them is added or removed.
        newest = newest.max(meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos());
    }
    Some(newest)
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_not_compile_inputs_but_sources_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in ["exercises/src/ch03.rs", "exercises/kernels/ch03/k.cu", "target/debug/x"] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "x").unwrap();
        }
        let before = newest_input(root).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("exercises/kernels/ch03/k.cu"), "y").unwrap();
        std::fs::write(root.join("target/debug/x"), "y").unwrap();
        assert_eq!(newest_input(root).unwrap(), before, "kernels and target/ do not count");
        std::fs::write(root.join("exercises/src/ch03.rs"), "y").unwrap();
        assert!(newest_input(root).unwrap() > before, "a .rs edit counts");
    }

    #[test]
    fn a_stamp_goes_stale_when_an_input_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("exercises/src")).unwrap();
        std::fs::write(root.join("exercises/src/lib.rs"), "").unwrap();
        let exe = root.join("bin");
        std::fs::write(&exe, "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut stamps = Stamps::default();
        stamps.tests.insert("ch03".into(), Stamp { exe: exe.clone(), checked_ns: now_ns() });
        stamps.save(root);
        let stamps = Stamps::load(root);
        assert_eq!(stamps.fresh(root, "ch03"), Some(exe));
        assert_eq!(stamps.fresh(root, "ch04"), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("exercises/src/lib.rs"), "// edited").unwrap();
        assert_eq!(stamps.fresh(root, "ch03"), None);
    }
}
