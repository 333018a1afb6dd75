//! A child process run to its end or to a deadline, its output read on the side so a chatty
//! child cannot block on a full pipe. The runner's two children (cargo, building the test
//! binary; the test binary, grading) both run through here, so a front end that must answer in
//! time (the book's Check button) can bound a whole grade.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How a child ended.
pub struct Ended {
    /// `None`: the deadline came first and the child was killed.
    pub status: Option<ExitStatus>,
    pub stderr: String,
}

/// Spawns `cmd` with stdout and stderr piped, hands each line of stdout to `on_line` on this
/// thread as it comes, and waits for the child or `deadline`, whichever is first.
pub fn run(cmd: &mut Command, deadline: Option<Instant>, on_line: &mut dyn FnMut(&str)) -> std::io::Result<Ended> {
    if deadline.is_some() {
        // A group of its own, so that stopping it stops what it started too (cargo's rustc, the
        // emulator's worker). Only with a deadline: a terminal's Ctrl-C reaches the foreground
        // group, and the CLI's children should hear it.
        std::os::unix::process::CommandExt::process_group(cmd, 0);
    }
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let (lines, received) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = err.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let status = loop {
        let wait =
            deadline.map_or(Duration::from_millis(50), |d| d.saturating_duration_since(Instant::now()).min(Duration::from_millis(50)));
        match received.recv_timeout(wait) {
            Ok(line) => {
                on_line(&line);
                continue;
            }
            Err(RecvTimeoutError::Timeout) => {}
            // Stdout closed: the child is ending.
            Err(RecvTimeoutError::Disconnected) => break Some(child.wait()?),
        }
        if let Some(status) = child.try_wait()? {
            // Lines still in the channel belong to it.
            while let Ok(line) = received.try_recv() {
                on_line(&line);
            }
            break Some(status);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            while let Ok(line) = received.try_recv() {
                on_line(&line);
            }
            // A process the child started may still hold its pipes open: the readers are left
            // to finish on their own rather than waited for.
            return Ok(Ended { status: None, stderr: String::new() });
        }
    };
    let _ = reader.join();
    let stderr = errors.join().unwrap_or_default();
    Ok(Ended { status, stderr })
}

/// Kills the process group `pid` leads (see `run`).
fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return };
    // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory of
    // ours, and the group is the child's own (process_group(0) at its spawn).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(cmd: &mut Command, deadline: Option<Instant>) -> (Ended, Vec<String>) {
        let mut lines = Vec::new();
        let ended = run(cmd, deadline, &mut |l| lines.push(l.to_string())).unwrap();
        (ended, lines)
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_and_its_output_kept() {
        let started = Instant::now();
        let (ended, lines) =
            collect(Command::new("sh").args(["-c", "echo before; sleep 30"]), Some(Instant::now() + Duration::from_millis(300)));
        assert!(ended.status.is_none(), "killed");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(lines, ["before"]);
        let (ended, lines) = collect(Command::new("sh").args(["-c", "echo out; echo err >&2"]), None);
        assert!(ended.status.is_some_and(|s| s.success()));
        assert_eq!((lines, ended.stderr.as_str()), (vec!["out".to_string()], "err\n"));
    }
}
