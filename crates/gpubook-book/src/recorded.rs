//! Outputs recorded on a GPU. A device marker with `recorded=NAME` (`{{#figure streams serial
//! chunks=16 elems=4194304 recorded=h200-serial}}`) shows the output kept in
//! `book/recorded/NAME.json` instead of running: the book is built where there is no GPU, and the
//! chapters compare the emulator's model with a real one. `gpubook book --record DIR`, run on a
//! GPU machine (scripts/gpu/record-book.sh), runs those markers for real and writes their files
//! into DIR, with the machine, the date and the command that reproduces them.
//!
//! A recording keeps data (a timeline, bandwidth points, tables), not drawings, so the book
//! draws it with its figure code of today. It names the marker it was made from: when the page's
//! marker changes, the build fails until it is recorded again.

use super::outputs::{Body, Output};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folder of the recordings, under the workspace root.
pub const DIR: &str = "book/recorded";

/// One recorded output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recording {
    /// The marker it was made from, without its `recorded=`.
    pub marker: String,
    pub machine: Machine,
    /// The command line that prints or draws the same on that machine.
    pub command: Option<String>,
    pub caption: String,
    pub body: Body,
    /// How the file came to be when it is not a plain recording (an older output converted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where and when.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// `NVIDIA H200`.
    pub device: String,
    /// The NVIDIA driver, `580.159.04`.
    pub driver: Option<String>,
    /// The CUDA version the driver supports, `13.0`.
    pub cuda: Option<String>,
    /// `2026-11-30`.
    pub date: String,
    /// The gpubook commit the binaries were built from.
    pub commit: Option<String>,
}

impl Machine {
    /// This machine, for a recording made on `gpu` now.
    pub fn here(gpu: &gpubook::gpu::Gpu) -> Machine {
        let info = gpu.info();
        // The kernel module's version line names the driver: "NVRM version: NVIDIA UNIX ... 580.159.04 ...".
        let driver = std::fs::read_to_string("/proc/driver/nvidia/version").ok().and_then(|t| {
            t.split_whitespace()
                .find(|w| w.chars().filter(|c| *c == '.').count() >= 1 && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
                .map(str::to_string)
        });
        Machine {
            device: info.name.clone(),
            driver,
            cuda: info.driver_version.map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
            date: today(),
            commit: std::env::var("GPUBOOK_COMMIT").ok().filter(|c| !c.is_empty()),
        }
    }

    /// `NVIDIA H200 (driver 580.159.04, CUDA 13.0) on 2026-11-30, gpubook abc1234`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = &self.driver {
            parts.push(format!("driver {d}"));
        }
        if let Some(c) = &self.cuda {
            parts.push(format!("CUDA {c}"));
        }
        let mut s = self.device.clone();
        if !parts.is_empty() {
            s += &format!(" ({})", parts.join(", "));
        }
        s += &format!(" on {}", self.date);
        if let Some(c) = &self.commit {
            s += &format!(", gpubook {c}");
        }
        s
    }
}

/// Whether the recording `name` is there.
pub fn exists(root: &Path, name: &str) -> bool {
    file(&root.join(DIR), name).is_ok_and(|p| p.is_file())
}

/// The recording `name` for the marker `marker`, read from `root`'s book/recorded/.
pub fn load(root: &Path, name: &str, marker: &str) -> anyhow::Result<Recording> {
    let path = file(&root.join(DIR), name)?;
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!("no recording {} (run scripts/gpu/record-book.sh on a GPU machine and copy its files there)", path.display())
    })?;
    let r: Recording = serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    if r.marker != marker {
        bail!(
            "{} was recorded for `{{{{#{}}}}}` but the page now says `{{{{#{marker}}}}}`: record it again (scripts/gpu/record-book.sh)",
            path.display(),
            r.marker
        );
    }
    check_no_paths(&r).with_context(|| path.display().to_string())?;
    Ok(r)
}

/// Writes `out`, just made on `gpu` from `marker`, as the recording `name` into `dir`.
pub fn save(dir: &Path, name: &str, marker: &str, out: &Output, gpu: &gpubook::gpu::Gpu) -> anyhow::Result<Recording> {
    let r = Recording {
        marker: marker.to_string(),
        machine: Machine::here(gpu),
        command: out.command.clone(),
        caption: out.caption.clone(),
        body: out.body.clone(),
        note: None,
    };
    check_no_paths(&r)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = file(dir, name)?;
    std::fs::write(&path, serde_json::to_string_pretty(&r)? + "\n").with_context(|| format!("writing {}", path.display()))?;
    Ok(r)
}

/// `{{#recordings}}`: every recording in book/recorded/, as a table.
pub fn table(root: &Path) -> anyhow::Result<String> {
    let dir = root.join(DIR);
    let mut names: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    let mut out = String::from("| recording | marker | recorded on | command |\n|---|---|---|---|\n");
    for path in names {
        let r: Recording = serde_json::from_str(&std::fs::read_to_string(&path)?).with_context(|| format!("reading {}", path.display()))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let note = r.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        let command = r.command.as_ref().map(|c| format!("`{c}`")).unwrap_or_default();
        out += &format!("| `{name}` | `{}` | {}{note} | {command} |\n", r.marker, r.machine.describe());
    }
    Ok(out)
}

fn file(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        bail!("`recorded={name}`: a recording's name is letters, digits, `-` and `_`");
    }
    Ok(dir.join(format!("{name}.json")))
}

/// A recording says nothing about the machine that happened to run it beyond [`Machine`]: no
/// absolute paths (an output line like `wrote /root/out/svg/serial.svg` belongs to a log).
fn check_no_paths(r: &Recording) -> anyhow::Result<()> {
    let text = match &r.body {
        Body::Text(t) | Body::Markdown(t) => t.clone(),
        _ => String::new(),
    };
    let all = format!("{text}\n{}\n{}", r.caption, r.command.clone().unwrap_or_default());
    for word in all.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')') {
        if ["/root/", "/home/", "/tmp/", "/work/", "/Users/", "/var/"].iter().any(|p| word.starts_with(p)) {
            bail!("the recording names a path of the machine it ran on, `{word}`: leave such lines out");
        }
    }
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(body: Body) -> Recording {
        let machine = Machine {
            device: "NVIDIA H200".into(),
            driver: Some("580.159.04".into()),
            cuda: Some("13.0".into()),
            date: "2026-11-30".into(),
            commit: None,
        };
        Recording { marker: "run overlap".into(), machine, command: Some("gpubook overlap".into()), caption: "c".into(), body, note: None }
    }

    #[test]
    fn recordings_round_trip_and_name_their_machine() {
        let dir = std::env::temp_dir().join(format!("gpubook-recorded-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(DIR)).unwrap();
        let r = recording(Body::Markdown("| a |\n|---|\n| 1 |".into()));
        std::fs::write(dir.join(DIR).join("x.json"), serde_json::to_string(&r).unwrap()).unwrap();
        let back = load(&dir, "x", "run overlap").unwrap();
        assert_eq!(back.machine.describe(), "NVIDIA H200 (driver 580.159.04, CUDA 13.0) on 2026-11-30");
        let e = load(&dir, "x", "run overlap n=5").unwrap_err();
        assert!(e.to_string().contains("record it again"), "{e}");
        assert!(load(&dir, "../x", "run overlap").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn machine_paths_are_refused() {
        let r = recording(Body::Text("serial 10 µs\nwrote /root/out/svg/serial.svg".into()));
        assert!(check_no_paths(&r).unwrap_err().to_string().contains("/root/out/svg/serial.svg"));
        assert!(check_no_paths(&recording(Body::Text("fine".into()))).is_ok());
    }

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }
}
