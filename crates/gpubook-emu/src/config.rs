//! How an emulated device behaves: mode, watchdog, threads, compiler, cache. Read once from the
//! environment so a learner can switch without touching code.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// How a launch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Blocks one after another, deterministic; every load and store checked (bounds, races,
    /// barrier divergence). What graders use.
    #[default]
    Check,
    /// Blocks spread over worker threads, no instrumentation; for big inputs and benchmarks.
    /// Guard pages still catch wild writes past a buffer.
    Fast,
}

impl Mode {
    /// The word used in `GPUBOOK_EMU_MODE` and in the worker protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Check => "check",
            Mode::Fast => "fast",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "check" => Ok(Mode::Check),
            "fast" => Ok(Mode::Fast),
            other => Err(format!("`{other}` is not an emulator mode (expected `check` or `fast`)")),
        }
    }
}

/// Settings of one emulated device. `from_env` gives the defaults a learner gets.
#[derive(Debug, Clone)]
pub struct EmuConfig {
    /// Mode of launches that do not choose one (`GPUBOOK_EMU_MODE=check|fast`, default check).
    pub mode: Mode,
    /// A launch that runs longer is stopped and reported as a hang (`GPUBOOK_EMU_WATCHDOG_S`,
    /// default 10 s).
    pub watchdog: Duration,
    /// Worker threads for fast mode (`GPUBOOK_EMU_THREADS`, default: the machine's parallelism).
    pub threads: usize,
    /// The C++ compiler (`$CXX`); None tries `c++`, `g++`, `clang++` in that order.
    pub cxx: Option<PathBuf>,
    /// Where compiled kernels and the worker are cached (`GPUBOOK_CACHE_DIR`, else
    /// `$CARGO_TARGET_DIR/gpubook-cache`, else `~/.cache/gpubook`).
    pub cache_dir: PathBuf,
    /// Size of the emulated device memory. Virtual and sparse: only written pages cost memory.
    pub arena_bytes: u64,
    /// Streaming multiprocessors the emulated device claims (`GPUBOOK_EMU_SMS`, default 16):
    /// with the per-SM limits, how many blocks are resident at once.
    pub sms: u32,
    /// Check-mode launches also say who wrote each element of the buffers they stored to
    /// (`AccessCounts::buffers[..].writers`); off by default, so graders pay nothing.
    pub writers: bool,
    /// Check mode compiles kernels with its compiler pass where the compiler has one
    /// (check_pass.rs: the checks inlined into the kernel, a block run as a loop). Default on;
    /// `GPUBOOK_EMU_COMPILER_PASS=0` turns it off: ThreadSanitizer's hooks then see every
    /// access, as without the plugin headers.
    pub compiler_pass: bool,
    /// For `gpubook emu-bench` only: check mode's engine without its checks (every load and
    /// store hook returns at once; no bounds, races, never-written reads or counts), to measure
    /// what the fibers, barriers and hook calls cost by themselves. Never set by a grader.
    #[doc(hidden)]
    pub bench_engine_only: bool,
}

/// 64 GiB of address space; pages are only backed once written.
const DEFAULT_ARENA_BYTES: u64 = 64 << 30;
const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);
const DEFAULT_SMS: u32 = 16;

impl EmuConfig {
    /// The defaults, overridden by the `GPUBOOK_*` variables documented on each field. A
    /// malformed value is reported once on stderr and the default is used: a typo in an
    /// environment variable should not stop a learner's test run.
    pub fn from_env() -> EmuConfig {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mode = var("GPUBOOK_EMU_MODE")
            .and_then(|v| v.parse::<Mode>().or_else(|e| warn("GPUBOOK_EMU_MODE", &e).ok_or(())).ok())
            .unwrap_or_default();
        let watchdog = var("GPUBOOK_EMU_WATCHDOG_S")
            .and_then(|v| match v.trim().parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
                _ => warn("GPUBOOK_EMU_WATCHDOG_S", &format!("`{v}` is not a positive number of seconds")),
            })
            .unwrap_or(DEFAULT_WATCHDOG);
        let threads = var("GPUBOOK_EMU_THREADS")
            .and_then(|v| match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => warn("GPUBOOK_EMU_THREADS", &format!("`{v}` is not a positive thread count")),
            })
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let cache_dir = var("GPUBOOK_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("gpubook-cache")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("gpubook")))
            .unwrap_or_else(|| std::env::temp_dir().join("gpubook-cache"));
        let sms = var("GPUBOOK_EMU_SMS")
            .and_then(|v| match v.trim().parse::<u32>() {
                Ok(n) if (1..=1024).contains(&n) => Some(n),
                _ => warn("GPUBOOK_EMU_SMS", &format!("`{v}` is not a number of SMs between 1 and 1024")),
            })
            .unwrap_or(DEFAULT_SMS);
        let compiler_pass = var("GPUBOOK_EMU_COMPILER_PASS").is_none_or(|v| match v.trim() {
            "0" | "off" | "false" => false,
            "1" | "on" | "true" => true,
            _ => warn("GPUBOOK_EMU_COMPILER_PASS", &format!("`{v}` is not 0 or 1")).unwrap_or(true),
        });
        EmuConfig {
            mode,
            watchdog,
            threads,
            cxx: var("CXX").map(PathBuf::from),
            cache_dir,
            arena_bytes: DEFAULT_ARENA_BYTES,
            sms,
            writers: false,
            compiler_pass,
            bench_engine_only: false,
        }
    }
}

fn warn<T>(name: &str, problem: &str) -> Option<T> {
    eprintln!("gpubook emulator: ignoring {name}: {problem}");
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_words() {
        assert_eq!("check".parse::<Mode>(), Ok(Mode::Check));
        assert_eq!(" FAST\n".parse::<Mode>(), Ok(Mode::Fast));
        assert!("fsat".parse::<Mode>().unwrap_err().contains("`fsat`"));
        assert_eq!(Mode::Fast.to_string(), "fast");
    }

    #[test]
    fn defaults_are_sane() {
        let c = EmuConfig::from_env();
        assert!(c.threads >= 1);
        assert!(c.watchdog > Duration::ZERO);
        assert!(c.arena_bytes >= 1 << 30);
    }
}
