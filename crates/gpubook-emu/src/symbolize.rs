//! A code address inside a kernel .so → the learner's file:line, through binutils' addr2line
//! (always present where g++ is, since g++ needs binutils to link). Inlined frames are walked
//! from the innermost out, skipping gpubook's own headers, so an out-of-bounds store inside
//! `atomicAdd` is reported at the learner's `atomicAdd(...)` call.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One source position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub file: PathBuf,
    pub line: u32,
    pub function: String,
}

/// The first position outside `runtime_dir` among `pcs` (tried in order: the faulting pc, then
/// its callers). None when addr2line is missing or knows nothing.
///
/// `source` is the module's path as the learner gave it: DWARF joins a relative path with the
/// compiler's working directory, and we give back the learner's spelling.
pub(crate) fn locate(so: &Path, pcs: &[u64], runtime_dir: &Path, source: &Path) -> Option<Location> {
    if pcs.is_empty() {
        return None;
    }
    let out = Command::new("addr2line")
        .arg("-e")
        .arg(so)
        .args(["-a", "-f", "-i", "-C"])
        .args(pcs.iter().map(|pc| format!("{pc:#x}")))
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut loc = parse(&text).into_iter().flatten().find(|l| !l.file.starts_with(runtime_dir))?;
    if source.is_relative() && loc.file.is_absolute() && loc.file.ends_with(source) {
        loc.file = source.to_path_buf();
    }
    Some(loc)
}

/// addr2line `-a -f -i` output: per address an `0x...` line, then (function, file:line) pairs,
/// innermost inline frame first. Returns the known frames per address.
fn parse(text: &str) -> Vec<Vec<Location>> {
    let mut out: Vec<Vec<Location>> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("0x") {
            out.push(Vec::new());
            continue;
        }
        let function = line.trim().to_string();
        let Some(pos) = lines.next() else { break };
        // "file:line" or "file:line (discriminator 2)"; "??:0" or "??:?" when unknown.
        let pos = pos.split(" (discriminator").next().unwrap_or(pos);
        let Some((file, num)) = pos.rsplit_once(':') else {
            continue;
        };
        let (Ok(line), false) = (num.trim().parse::<u32>(), file == "??") else {
            continue;
        };
        if line == 0 {
            continue;
        }
        if let Some(frames) = out.last_mut() {
            frames.push(Location { file: file.into(), line, function });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_frames_skip_the_runtime() {
        let text = "0x0000000000001139\n\
                    atomicAdd(int*, int)\n/cache/emu-runtime-1/device/atomics.h:40\n\
                    histogram\nkernels/ch07/hist.cu:9 (discriminator 1)\n\
                    0x0000000000001200\n??\n??:0\n";
        let frames = parse(text);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].len(), 2);
        assert!(frames[1].is_empty());
        let first_outside = frames.into_iter().flatten().find(|l| !l.file.starts_with("/cache/emu-runtime-1"));
        assert_eq!(first_outside, Some(Location { file: "kernels/ch07/hist.cu".into(), line: 9, function: "histogram".into() }));
    }

    #[test]
    fn a_missing_file_is_just_unknown() {
        assert_eq!(locate(Path::new("/nonexistent.so"), &[0x10], Path::new("/r"), Path::new("k.cu")), None);
    }
}
