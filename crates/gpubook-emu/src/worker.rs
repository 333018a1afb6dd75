//! The worker process: spawning it with the arena inherited, one command at a time on its
//! stdin, replies on fd 3, kernel printf forwarded from its stdout, a watchdog around every
//! request. Kernel code only ever runs there, so a kernel that crashes or spins forever costs a
//! respawn, never the caller's process.
//!
//! Everything happens on the calling thread with poll(2), no reader threads: the worker flushes
//! its stdout before it replies, so by the time a reply arrives the kernel's printf output is
//! in the pipe, and forwarding it with `print!` on the caller's thread lets libtest capture it
//! for the test that launched the kernel.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::counts::AccessCounts;
use crate::error::{EmuError, io_context};
use gpubook_cudac::DiagClass;

/// The fd numbers the worker finds its replies pipe and the arena at (DESIGN.md).
const REPLY_FD: RawFd = 3;
const ARENA_FD: RawFd = 4;
/// How much of the worker's stderr is kept for messages.
const STDERR_TAIL: usize = 16 << 10;
/// After the watchdog fires: how long the worker may take to describe the hang.
pub(crate) const HANG_REPORT_GRACE: Duration = Duration::from_secs(1);

/// One reply line (fields beyond `ok` and `ns` only on failures; unknown fields are ignored).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Reply {
    pub ok: bool,
    #[serde(default)]
    pub ns: Option<u64>,
    /// A check-mode launch's access counts.
    #[serde(default)]
    pub counts: Option<AccessCounts>,
    /// Check mode: the checks the launch could not make (their shadow's address space was refused).
    #[serde(default)]
    pub unchecked: Option<String>,
    /// The worker is exiting after this reply (a crash, a hang): the next command needs a fresh one.
    #[serde(default)]
    pub exiting: bool,
    /// The launch wrote the writers file it was asked for (WRITERS).
    #[serde(default)]
    pub writers: bool,
    #[serde(default)]
    pub class: Option<WireClass>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub so: Option<String>,
    #[serde(default)]
    pub pc: Option<u64>,
    #[serde(default)]
    pub frames: Vec<u64>,
    #[serde(default)]
    pub block: Option<[u32; 3]>,
    #[serde(default)]
    pub thread: Option<[u32; 3]>,
    #[serde(default)]
    pub more: Vec<WireNote>,
    /// GLOBAL: the variable's address and size.
    #[serde(default)]
    pub addr: Option<u64>,
    #[serde(default)]
    pub bytes: Option<u64>,
    /// PEEK: the bytes read, as hex.
    #[serde(default)]
    pub data: Option<String>,
}

/// A failure's class: a bug in the kernel, or a problem of the emulator itself (`bad_module`,
/// `protocol`, or a class this host does not know).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum WireClass {
    Kernel(DiagClass),
    Other(String),
}

/// One entry of a failure's `more`: a sentence, or a place with what happened there.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum WireNote {
    Text(String),
    Place {
        #[serde(alias = "message")]
        what: String,
        #[serde(default)]
        so: Option<String>,
        #[serde(default)]
        pc: Option<u64>,
        #[serde(default)]
        block: Option<[u32; 3]>,
        #[serde(default)]
        thread: Option<[u32; 3]>,
    },
}

impl Reply {
    /// The kernel bug this failure reports, if it is one.
    pub fn kernel_class(&self) -> Option<DiagClass> {
        match self.class {
            Some(WireClass::Kernel(c)) => Some(c),
            _ => None,
        }
    }
}

/// Why a request got no reply.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The deadline passed; the worker is still running (the caller decides what to do).
    TimedOut,
    /// The worker exited or was killed before replying.
    Died { status: Option<ExitStatus>, stderr: String },
    /// We could not talk to it at all.
    Io(EmuError),
}

pub(crate) struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: std::fs::File,
    stdout: ChildStdout,
    stderr: ChildStderr,
    reply_buf: Vec<u8>,
    out_buf: Vec<u8>,
    err_tail: VecDeque<u8>,
}

impl Worker {
    /// Starts `exe` with the arena (`fd` mapped at `addr`, `bytes` long) inherited as fd 4.
    pub fn spawn(exe: &Path, arena_fd: RawFd, addr: u64, bytes: u64) -> Result<Worker, EmuError> {
        let (reply_read, reply_write) = pipe()?;
        let reply_src = reply_write.as_raw_fd();
        let mut cmd = Command::new(exe);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("GPUBOOK_ARENA_FD", ARENA_FD.to_string())
            .env("GPUBOOK_ARENA_ADDR", format!("{addr:#x}"))
            .env("GPUBOOK_ARENA_BYTES", bytes.to_string());
        // SAFETY: the closure runs in the child between fork and exec and only makes
        // async-signal-safe calls (fcntl, dup2, close) on fds that are open in the parent.
        unsafe {
            cmd.pre_exec(move || place_fds(reply_src, arena_fd));
        }
        let mut child = cmd.spawn().map_err(io_context(format!("starting the emulator's worker {}", exe.display())))?;
        drop(reply_write); // ours must close, or we would never see the worker's end close
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take()) else {
            unreachable!("all three were piped");
        };
        for fd in [reply_read.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()] {
            set_nonblocking(fd)?;
        }
        Ok(Worker {
            child,
            stdin,
            replies: std::fs::File::from(reply_read),
            stdout,
            stderr,
            reply_buf: Vec::new(),
            out_buf: Vec::new(),
            err_tail: VecDeque::new(),
        })
    }

    /// Sends one command line and waits for its reply until `deadline` (None: no limit).
    pub fn request(&mut self, line: &str, deadline: Option<Instant>) -> Result<Reply, Failure> {
        debug_assert!(!line.contains('\n'));
        if let Err(e) = self.stdin.write_all(format!("{line}\n").as_bytes()).and_then(|_| self.stdin.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Err(self.died());
            }
            return Err(Failure::Io(EmuError::io("sending a command to the emulator's worker", e)));
        }
        self.await_reply(deadline)
    }

    /// Waits for the next reply line (also used after the watchdog's nudge).
    pub fn await_reply(&mut self, deadline: Option<Instant>) -> Result<Reply, Failure> {
        loop {
            if let Some(line) = self.take_reply_line() {
                self.pump_output(); // printf that preceded the reply
                self.flush_partial_output();
                return serde_json::from_slice::<Reply>(&line).map_err(|e| {
                    Failure::Io(EmuError::Worker(format!("unreadable reply `{}`: {e}", String::from_utf8_lossy(&line).trim())))
                });
            }
            let timeout_ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        self.pump_output();
                        self.flush_partial_output();
                        return Err(Failure::TimedOut);
                    }
                    left.as_millis().clamp(1, i32::MAX as u128) as i32
                }
            };
            let mut fds = [self.replies.as_raw_fd(), self.stdout.as_raw_fd(), self.stderr.as_raw_fd()].map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
            // SAFETY: fds is a valid array of pollfd for its length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Failure::Io(EmuError::io("waiting for the emulator's worker (poll)", e)));
            }
            self.pump_output();
            if fds[0].revents != 0 {
                match read_available(&mut self.replies, &mut self.reply_buf) {
                    Ok(true) => {}
                    Ok(false) if self.reply_buf.contains(&b'\n') => {}
                    Ok(false) => return Err(self.died()), // fd 3 closed: the worker is gone
                    Err(e) => {
                        return Err(Failure::Io(EmuError::io("reading the emulator worker's reply", e)));
                    }
                }
            }
        }
    }

    /// Asks a spinning worker to describe where it is (it may ignore this: see DESIGN.md).
    pub fn nudge(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGUSR1) };
    }

    /// Kills the worker and reaps it. Device memory is unaffected: it lives in the arena.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.pump_output();
        self.flush_partial_output();
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last bytes the worker wrote to stderr.
    pub fn stderr_tail(&mut self) -> String {
        self.pump_output();
        let (a, b) = self.err_tail.as_slices();
        let mut s = String::from_utf8_lossy(a).into_owned();
        s.push_str(&String::from_utf8_lossy(b));
        s
    }

    fn died(&mut self) -> Failure {
        // fd 3 closes as the process exits; give the exit a moment to become visible.
        let give_up = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < give_up => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    let _ = self.child.kill();
                    break self.child.wait().ok();
                }
            }
        };
        Failure::Died { status, stderr: self.stderr_tail() }
    }

    fn take_reply_line(&mut self) -> Option<Vec<u8>> {
        let end = self.reply_buf.iter().position(|&b| b == b'\n')?;
        let line: Vec<u8> = self.reply_buf.drain(..=end).collect();
        if line.iter().all(u8::is_ascii_whitespace) {
            return self.take_reply_line(); // tolerate blank lines
        }
        Some(line)
    }

    /// Moves whatever stdout/stderr bytes are waiting: stdout lines to our stdout, stderr into
    /// the tail.
    fn pump_output(&mut self) {
        let _ = read_available(&mut self.stdout, &mut self.out_buf);
        while let Some(end) = self.out_buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.out_buf.drain(..=end).collect();
            print!("{}", String::from_utf8_lossy(&line));
        }
        let mut err = Vec::new();
        let _ = read_available(&mut self.stderr, &mut err);
        self.err_tail.extend(err);
        let excess = self.err_tail.len().saturating_sub(STDERR_TAIL);
        self.err_tail.drain(..excess);
    }

    /// Prints a last line that had no newline (the kernel's final printf).
    fn flush_partial_output(&mut self) {
        if !self.out_buf.is_empty() {
            print!("{}", String::from_utf8_lossy(&std::mem::take(&mut self.out_buf)));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // QUIT tells a healthy worker to exit; kill() covers one that is stuck. A worker run under
        // a profiler (valgrind's callgrind) needs time to write its profile: GPUBOOK_EMU_QUIT_GRACE_MS.
        let _ = self.stdin.write_all(b"QUIT\n");
        let _ = self.stdin.flush();
        let grace = std::env::var("GPUBOOK_EMU_QUIT_GRACE_MS").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let until = std::time::Instant::now() + std::time::Duration::from_millis(grace);
        while std::time::Instant::now() < until && self.alive() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.kill();
    }
}

/// Describes how a process ended: "was killed by signal 11 (SIGSEGV)" / "exited with status 1".
pub(crate) fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(sig)) => format!("was killed by signal {sig} ({})", signal_name(sig)),
            _ => "ended".into(),
        },
        None => "vanished".into(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV, an invalid memory access",
        libc::SIGBUS => "SIGBUS, an invalid memory access",
        libc::SIGFPE => "SIGFPE, an arithmetic error such as an integer division by zero",
        libc::SIGILL => "SIGILL, an illegal instruction",
        libc::SIGABRT => "SIGABRT, an abort",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// In the child: the reply pipe becomes fd 3 and the arena fd 4, both kept across exec. Both
/// are first moved above 10, since either may already sit on 3 or 4 in the parent.
fn place_fds(reply: RawFd, arena: RawFd) -> std::io::Result<()> {
    let check = |r: libc::c_int| {
        if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) }
    };
    // SAFETY: plain fd syscalls on fds inherited from the parent; dup2 clears FD_CLOEXEC on
    // the new descriptor, which is what lets it survive exec.
    unsafe {
        let r = check(libc::fcntl(reply, libc::F_DUPFD_CLOEXEC, 10))?;
        let a = check(libc::fcntl(arena, libc::F_DUPFD_CLOEXEC, 10))?;
        check(libc::dup2(r, REPLY_FD))?;
        check(libc::dup2(a, ARENA_FD))?;
        libc::close(r);
        libc::close(a);
    }
    Ok(())
}

fn pipe() -> Result<(OwnedFd, OwnedFd), EmuError> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(EmuError::io("creating the worker's reply pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) -> Result<(), EmuError> {
    // SAFETY: fcntl on an fd we own.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok { Ok(()) } else { Err(EmuError::io("configuring a pipe to the worker", std::io::Error::last_os_error())) }
}

/// Reads everything available without blocking. Ok(false) at end of file.
fn read_available(r: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in worker written in sh: checks the inherited fds, answers on fd 3, prints.
    fn fake(script: &str) -> Worker {
        let dir = std::env::temp_dir().join(format!("gpubook-emu-fake-{}-{:p}", std::process::id(), script));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("worker.sh");
        std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let arena = crate::arena::Arena::new(16 << 20, 40).unwrap();
        let w = Worker::spawn(&exe, arena.fd(), arena.base(), arena.bytes()).unwrap();
        std::mem::forget(arena); // the child holds its own copy of the fd
        w
    }

    #[test]
    fn replies_arrive_on_fd3_and_printf_is_forwarded() {
        let mut w = fake(
            r#"test -e /proc/self/fd/4 || { echo "no arena fd" >&2; exit 9; }
               while read cmd rest; do
                 case "$cmd" in
                   LAUNCH) echo "hello from a kernel"; printf '{"ok":true,"ns":42}\n' >&3 ;;
                   QUIT) exit 0 ;;
                   *) printf '{"ok":true}\n' >&3 ;;
                 esac
               done"#,
        );
        let r = w.request("ALLOC 0x1000 16 4 a", None).unwrap();
        assert!(r.ok);
        let r = w.request("LAUNCH 1 k 1 1 1 1 1 1 0 check 1 0", Some(Instant::now() + Duration::from_secs(5))).unwrap();
        assert_eq!(r.ns, Some(42));
    }

    #[test]
    fn a_silent_worker_times_out_and_a_dead_one_is_noticed() {
        let mut w = fake("read line; sleep 30");
        let t = Instant::now();
        assert!(matches!(w.request("LAUNCH", Some(Instant::now() + Duration::from_millis(200))), Err(Failure::TimedOut)));
        assert!(t.elapsed() < Duration::from_secs(2));
        w.kill();
        assert!(!w.alive());

        let mut w = fake("read line; echo 'worker: out of luck' >&2; kill -SEGV $$");
        match w.request("LAUNCH", Some(Instant::now() + Duration::from_secs(5))) {
            Err(Failure::Died { status, stderr }) => {
                assert!(describe_exit(status).contains("SIGSEGV"), "{status:?}");
                assert!(stderr.contains("out of luck"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failure_replies_parse() {
        let r: Reply = serde_json::from_str(
            r#"{"ok":false,"class":"out_of_bounds","message":"wrote c[4]","so":"/x.so","pc":4660,
                "block":[1,0,0],"thread":[3,0,0],"more":["a note",{"message":"m","pc":1}],"extra":1}"#,
        )
        .unwrap();
        assert_eq!((r.ok, r.pc, r.block, r.more.len()), (false, Some(4660), Some([1, 0, 0]), 2));
        assert_eq!(r.kernel_class(), Some(DiagClass::OutOfBounds));
        assert_eq!(r.more[0], WireNote::Text("a note".into()));
        assert!(matches!(&r.more[1], WireNote::Place { what, pc: Some(1), .. } if what == "m"));
        let r: Reply = serde_json::from_str(r#"{"ok":false,"class":"bad_module","message":"dlopen: no"}"#).unwrap();
        assert_eq!((r.kernel_class(), r.class), (None, Some(WireClass::Other("bad_module".into()))));
    }

    #[test]
    fn a_launch_that_could_not_check_everything_says_what() {
        let r: Reply = serde_json::from_str(r#"{"ok":true,"ns":5,"unchecked":"global-memory races (...)"}"#).unwrap();
        assert_eq!(r.unchecked.as_deref(), Some("global-memory races (...)"));
        let r: Reply = serde_json::from_str(r#"{"ok":true,"ns":5}"#).unwrap();
        assert_eq!(r.unchecked, None);
    }
}
