//! Runs the C++ compiler: the worker once per runtime version, each kernel module once per
//! (source, headers, flags, mode, compiler). Results are cached on disk under
//! `EmuConfig::cache_dir`, named by a hash of everything that went into them, so a second run
//! (or a second test process) loads in milliseconds. Several processes may build the same thing
//! at once: each writes a temporary file and renames it into place, which is atomic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::check_pass;
use crate::config::{EmuConfig, Mode};
use crate::error::{EmuError, io_context};
use crate::source::Rewritten;
use crate::uninitialized::{self, UninitializedUse};

include!(concat!(env!("OUT_DIR"), "/emu_files.rs"));

/// Worker sources: every file with these extensions directly under `runtime/worker/` (one object
/// each). Files in its subfolders are parts of one of them: worker/access.cpp includes the
/// access path (access/*.cpp) so that check_access inlines it without link-time optimisation.
const WORKER_SOURCE_DIR: &str = "worker";
const WORKER_SOURCE_EXTENSIONS: &[&str] = &["cpp", "cc", "c", "S"];
/// Flags for the worker; `-rdynamic` exports the runtime's symbols to the kernels it dlopens.
const WORKER_FLAGS: &[&str] = &["-std=c++17", "-O2", "-g", "-pthread", "-rdynamic", "-fno-exceptions", "-fno-rtti"];
const WORKER_LIBS: &[&str] = &["-ldl"];
pub(crate) const WORKER_NAME: &str = "gpubook-emu-worker";

/// Flags for every kernel module (DESIGN.md, "The contract").
const MODULE_FLAGS: &[&str] = &[
    "-std=c++17",
    "-fPIC",
    "-shared",
    // DWARF 4, not g++ 12's default 5: binutils 2.40's addr2line misnames the file of some
    // lines in DWARF 5 (it reports the rewritten .cpp in the cache instead of the .cu).
    "-gdwarf-4",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-strict-aliasing",
    "-fstack-clash-protection",
    "-x",
    "c++",
];
/// Check mode: every load and store becomes a call to the runtime's `__tsan_*` hooks
/// (ThreadSanitizer's instrumentation without its runtime: worker/access/checks.cpp defines the hooks).
/// Volatile accesses get hooks of their own (a thread waiting for a flag), and calls are not
/// instrumented. `-nodefaultlibs` keeps g++ from linking libtsan into the module (undefined
/// symbols resolve in the worker, which loads the module); `-lgcc` brings back its helpers.
/// `-fno-tree-sra` keeps a `float4` load one 16-byte access (as on a GPU: one vector request,
/// aligned to 16) instead of four 4-byte ones.
const CHECK_FLAGS_GCC: &[&str] = &[
    "-O1",
    "-fno-tree-sra",
    "-fsanitize=thread",
    "--param",
    "tsan-distinguish-volatile=1",
    "--param",
    "tsan-instrument-func-entry-exit=0",
    "-DGPUBOOK_CHECK=1",
];
const CHECK_FLAGS_CLANG: &[&str] = &[
    "-O1",
    "-fsanitize=thread",
    "-mllvm",
    "-tsan-distinguish-volatile=1",
    "-mllvm",
    "-tsan-instrument-func-entry-exit=0",
    "-DGPUBOOK_CHECK=1",
];
/// Fast mode keeps every loop (C++ lets a compiler assume a loop without side effects ends,
/// which would turn a kernel's infinite loop into "ok"): the watchdog then reports it.
/// `-fno-semantic-interposition` lets g++ inline a kernel (an exported function of a shared
/// object) into the module's block loop (device/kernel_export.h), as a native build would.
const FAST_FLAGS: &[&str] = &["-O2", "-fno-semantic-interposition", "-DGPUBOOK_FAST=1"];
/// For both modes.
const LOOP_FLAGS: &[&str] = &["-fno-finite-loops"];
/// `-lm`: a module that calls `sqrt` or `logf` needs libm itself; the worker may not have it
/// loaded (a linker with --as-needed drops it, as Ubuntu 24.04's g++ 13 did on the H200).
const LINK_FLAGS: &[&str] = &["-nodefaultlibs", "-lgcc", "-lm"];

/// How much of the compiler's output a compile error carries.
const LOG_LINES: usize = 40;

/// A C++ compiler that answered `--version`.
#[derive(Debug, Clone)]
pub(crate) struct Toolchain {
    pub cxx: PathBuf,
    /// First line of `--version`: part of every cache key, so an upgrade rebuilds.
    pub version: String,
    pub clang: bool,
    /// Takes `-ftrivial-auto-var-init=pattern` (g++ 12 and later, clang 8 and later).
    pub pattern_init: bool,
    /// Its GCC plugin headers (check_pass.rs), or why it has none.
    pub plugin_headers: Result<PathBuf, String>,
}

/// The emulator's C++ sources written out, and the worker built from them.
#[derive(Debug, Clone)]
pub(crate) struct Runtime {
    /// `<cache>/emu-runtime-<hash>/`: holds gpubook_device.h and friends.
    pub dir: PathBuf,
    pub worker: PathBuf,
    /// Check mode's compiler pass, built in `dir` (check_pass.rs), or why there is none.
    pub pass: Result<PathBuf, String>,
}

/// The C++ compiler the emulator builds with, as `probe_compiler` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    pub cxx: PathBuf,
    /// The first line of its `--version`.
    pub version: String,
    /// Where the emulator's worker was built with it.
    pub worker: PathBuf,
    /// Check mode fills locals that have no initialiser with bytes 0xFE
    /// (`-ftrivial-auto-var-init=pattern`: g++ 12 and later, clang 8 and later).
    pub pattern_init: bool,
    /// Check mode's compiler pass (a GCC plugin built with it), or why check mode does without.
    pub check_pass: Result<PathBuf, String>,
}

/// The optimisation flags a fast-mode module is compiled with, for a native program that should
/// be compiled the same way (`gpubook emu-bench`'s baseline): what fast mode costs is then the
/// emulation, not the compiler's settings.
pub fn fast_mode_flags() -> Vec<&'static str> {
    ["-std=c++17", "-fno-exceptions", "-fno-rtti", "-fno-strict-aliasing"].iter().chain(FAST_FLAGS).chain(LOOP_FLAGS).copied().collect()
}

/// Finds the C++ compiler the emulator would use and builds (or finds in the cache) the worker
/// with it: what the emulator's first load does, so an error here is exactly the one the
/// emulator would give (`gpubook doctor` shows it).
pub fn probe_compiler(config: &EmuConfig) -> Result<Compiler, EmuError> {
    let tc = toolchain(config)?;
    let rt = runtime(config, &tc)?;
    let check_pass = if config.compiler_pass { rt.pass } else { Err("off (GPUBOOK_EMU_COMPILER_PASS=0)".into()) };
    Ok(Compiler { cxx: tc.cxx, version: tc.version, worker: rt.worker, pattern_init: tc.pattern_init, check_pass })
}

/// Finds the compiler once per process per configured path.
pub(crate) fn toolchain(config: &EmuConfig) -> Result<Toolchain, EmuError> {
    type Found = HashMap<Option<PathBuf>, Result<Toolchain, String>>;
    static FOUND: OnceLock<Mutex<Found>> = OnceLock::new();
    let mut found = FOUND.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    found.entry(config.cxx.clone()).or_insert_with(|| find_toolchain(config.cxx.as_deref())).clone().map_err(EmuError::NoCompiler)
}

fn find_toolchain(configured: Option<&Path>) -> Result<Toolchain, String> {
    let candidates: Vec<PathBuf> = match configured {
        Some(c) => vec![c.to_path_buf()],
        None => ["c++", "g++", "clang++"].iter().map(PathBuf::from).collect(),
    };
    let mut tried = Vec::new();
    for cxx in candidates {
        match Command::new(&cxx).arg("--version").output() {
            Ok(out) if out.status.success() => {
                let text = String::from_utf8_lossy(&out.stdout);
                let version = text.lines().next().unwrap_or("").trim().to_string();
                let clang = text.contains("clang");
                let pattern_init = accepts(&cxx, uninitialized::PATTERN_INIT);
                let plugin_headers = check_pass::plugin_headers(&cxx, clang);
                return Ok(Toolchain { cxx, version, clang, pattern_init, plugin_headers });
            }
            Ok(out) => tried.push(format!("`{} --version` exited with {}", cxx.display(), out.status)),
            Err(e) => tried.push(format!("`{}`: {e}", cxx.display())),
        }
    }
    let how = if configured.is_some() { "$CXX" } else { "c++, g++ and clang++ on PATH" };
    Err(format!(
        "tried {how} ({}); install one (Debian/Ubuntu: `sudo apt install g++`; macOS is not \
         supported) or set CXX to a C++17 compiler",
        tried.join("; ")
    ))
}

/// Whether `cxx` compiles an empty C++ file with `flag` (an unknown option is an error).
fn accepts(cxx: &Path, flag: &str) -> bool {
    Command::new(cxx)
        .args([flag, "-fsyntax-only", "-x", "c++", "-"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Writes the embedded runtime sources into the cache and builds the worker, once per process
/// (and once per machine: a finished build is reused).
pub(crate) fn runtime(config: &EmuConfig, tc: &Toolchain) -> Result<Runtime, EmuError> {
    static BUILT: OnceLock<Mutex<HashMap<PathBuf, Runtime>>> = OnceLock::new();
    let mut h = Key::new("runtime");
    for (path, bytes) in EMU_FILES {
        h.add(path.as_bytes()).add(bytes);
    }
    h.add(tc.cxx.as_os_str().as_encoded_bytes()).add(tc.version.as_bytes());
    for f in WORKER_FLAGS.iter().chain(WORKER_LIBS) {
        h.add(f.as_bytes());
    }
    let dir = config.cache_dir.join(format!("emu-runtime-{}", h.hex()));
    // Held while building, so threads of one process build once; other processes race
    // harmlessly through the renames.
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = built.get(&dir) {
        return Ok(rt.clone());
    }
    if EMU_FILES.iter().all(|(p, _)| *p != "gpubook_device.h") {
        return Err(EmuError::Worker(
            "this build of gpubook-emu embeds no crates/gpubook-emu/runtime/gpubook_device.h; rebuild it from the \
             gpubook repository"
                .into(),
        ));
    }
    // Files that are there have the right contents: the folder is named by their hash.
    for (rel, bytes) in EMU_FILES {
        let path = dir.join(rel);
        if !path.is_file() {
            write_atomically(&path, bytes)?;
        }
    }
    let worker = dir.join(WORKER_NAME);
    if !worker.is_file() {
        build_worker(tc, &dir, &worker)?;
    }
    let pass = tc.plugin_headers.clone().and_then(|headers| check_pass::build(&tc.cxx, &headers, &dir));
    let rt = Runtime { dir: dir.clone(), worker, pass };
    built.insert(dir, rt.clone());
    Ok(rt)
}

/// Compiles each worker source to an object file, on as many threads as the machine has (the
/// runtime is a dozen files: ~2x faster on 2 cores than one g++ call), then links them.
fn build_worker(tc: &Toolchain, dir: &Path, worker: &Path) -> Result<(), EmuError> {
    let sources: Vec<PathBuf> = EMU_FILES
        .iter()
        .map(|(rel, _)| Path::new(rel))
        .filter(|p| p.parent() == Some(Path::new(WORKER_SOURCE_DIR)))
        .filter(|p| p.extension().is_some_and(|e| WORKER_SOURCE_EXTENSIONS.iter().any(|x| e == *x)))
        .map(|p| dir.join(p))
        .collect();
    if sources.is_empty() {
        return Err(EmuError::Worker(format!(
            "no worker sources in crates/gpubook-emu/runtime/{WORKER_SOURCE_DIR}/ were embedded in this build"
        )));
    }
    let objects: Vec<PathBuf> = sources.iter().map(|s| temp_name(&s.with_extension("o"))).collect();
    let jobs: Vec<(&PathBuf, &PathBuf)> = sources.iter().zip(&objects).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    let failures: Vec<EmuError> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut failed = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((src, obj)) = jobs.get(i) else {
                            break failed;
                        };
                        let mut cmd = Command::new(&tc.cxx);
                        cmd.args(WORKER_FLAGS).arg(format!("-I{}", dir.display())).arg("-c").arg(src).arg("-o").arg(obj);
                        if let Err(e) = run_worker_build(cmd, tc) {
                            failed.push(e);
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    let result = match failures.into_iter().next() {
        Some(e) => Err(e),
        None => {
            let tmp = temp_name(worker);
            let mut link = Command::new(&tc.cxx);
            link.args(WORKER_FLAGS).args(&objects).arg("-o").arg(&tmp).args(WORKER_LIBS);
            run_worker_build(link, tc)
                .and_then(|()| std::fs::rename(&tmp, worker).map_err(io_context(format!("moving the worker into {}", worker.display()))))
        }
    };
    for obj in &objects {
        let _ = std::fs::remove_file(obj);
    }
    result
}

fn run_worker_build(mut cmd: Command, tc: &Toolchain) -> Result<(), EmuError> {
    let out = cmd.output().map_err(io_context(format!("running {} to build the emulator's worker", tc.cxx.display())))?;
    if out.status.success() {
        return Ok(());
    }
    let log = String::from_utf8_lossy(&out.stderr);
    Err(EmuError::Worker(format!(
        "building the worker with {} failed (a bug in gpubook, not in your kernel):\n{}",
        tc.cxx.display(),
        first_lines(&log, LOG_LINES)
    )))
}

/// A compiled kernel module.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    pub so: PathBuf,
    /// Check mode: reads of locals before a store, as the compiler found them.
    pub uninitialized: Vec<UninitializedUse>,
}

/// Compiles `rewritten` (from `path`) for `mode`, or finds it in the cache.
pub(crate) fn compile_module(
    config: &EmuConfig,
    tc: &Toolchain,
    rt: &Runtime,
    path: &Path,
    include_dirs: &[PathBuf],
    rewritten: &Rewritten,
    mode: Mode,
) -> Result<Built, EmuError> {
    let mut flags: Vec<String> = MODULE_FLAGS.iter().map(|s| s.to_string()).collect();
    let mode_flags = match (mode, tc.clang) {
        (Mode::Check, false) => CHECK_FLAGS_GCC,
        (Mode::Check, true) => CHECK_FLAGS_CLANG,
        (Mode::Fast, _) => FAST_FLAGS,
    };
    flags.extend(mode_flags.iter().chain(LOOP_FLAGS).map(|s| s.to_string()));
    if mode == Mode::Check {
        flags.extend(uninitialized::flags(tc.clang, tc.pattern_init).iter().map(|s| s.to_string()));
        if let (true, Ok(plugin)) = (config.compiler_pass, &rt.pass) {
            flags.extend(check_pass::flags(plugin));
        }
    }
    // Quoted includes of the learner's file resolve from its own folder first, as with NVRTC.
    // unsupported/ holds stand-ins for CUDA headers the emulator lacks, which say so.
    let mut dirs = vec![rt.dir.clone(), rt.dir.join("unsupported")];
    // A source given as text has a bare name: its parent is "", and a bare `-I` would swallow
    // the next flag as its folder.
    dirs.extend(path.parent().filter(|d| !d.as_os_str().is_empty()).map(absolute));
    dirs.extend(include_dirs.iter().map(|d| absolute(d)));
    flags.extend(dirs.iter().map(|d| format!("-I{}", d.display())));
    flags.extend(["-include".to_string(), "gpubook_device.h".to_string()]);

    let mut h = Key::new("module");
    h.add(rewritten.text.as_bytes()).add(tc.cxx.as_os_str().as_encoded_bytes()).add(tc.version.as_bytes());
    h.add(mode.as_str().as_bytes());
    for f in flags.iter().map(String::as_str).chain(LINK_FLAGS.iter().copied()) {
        h.add(f.as_bytes());
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "kernel".into());
    let stem: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
    let kdir = config.cache_dir.join("emu-kernels");
    let base = kdir.join(format!("{stem}-{}-{}", mode.as_str(), h.hex()));
    // `<base>.deps` names the current build, `<base>-<headers hash>.so`, and lists the learner's
    // headers with their hashes. Each distinct set of inputs gets its own .so name, because
    // a worker that already dlopen'ed a path would keep the old code for it.
    let deps = base.with_extension("deps");
    if let Some(so) = cached_build(&deps) {
        return Ok(Built { uninitialized: read_uninitialized(&so), so });
    }

    std::fs::create_dir_all(&kdir).map_err(io_context(format!("creating the kernel cache {}", kdir.display())))?;
    // The rewritten source stays next to the .so: handy when debugging the emulator.
    let cpp = base.with_extension("cpp");
    write_atomically(&cpp, rewritten.text.as_bytes())?;
    let (tmp_so, tmp_d) = (temp_name(&base.with_extension("so")), temp_name(&base.with_extension("d")));
    let out = Command::new(&tc.cxx)
        .args(&flags)
        .arg("-MMD")
        .arg("-MF")
        .arg(&tmp_d)
        .arg(&cpp)
        .arg("-o")
        .arg(&tmp_so)
        .args(LINK_FLAGS)
        .output()
        .map_err(io_context(format!("running {} to compile {}", tc.cxx.display(), path.display())))?;
    let depfile = std::fs::read_to_string(&tmp_d).unwrap_or_default();
    let _ = std::fs::remove_file(&tmp_d);
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp_so);
        let log = String::from_utf8_lossy(&out.stderr);
        return Err(compile_error(path, &log, rt));
    }
    // The learner's headers (not ours, not the system's), so editing an included .cuh
    // rebuilds even though the .cu did not change.
    let mut headers = String::new();
    for header in parse_depfile(&depfile).into_iter().filter(|p| p != &cpp && !p.starts_with(&rt.dir)) {
        if let Ok(bytes) = std::fs::read(&header) {
            headers.push_str(&format!("{}\t{}\n", Key::new("file").add(&bytes).hex(), header.display()));
        }
    }
    let stem = base.file_name().expect("has a name").to_string_lossy();
    let so = base.with_file_name(format!("{stem}-{}.so", Key::new("headers").add(headers.as_bytes()).hex()));
    std::fs::rename(&tmp_so, &so).map_err(io_context(format!("moving the compiled kernel into {}", so.display())))?;
    // Written before the record that makes the build a cache hit.
    let uninitialized = uninitialized::parse(&String::from_utf8_lossy(&out.stderr), &rt.dir);
    let json = serde_json::to_vec(&uninitialized).expect("plain data serialises");
    write_atomically(&uninitialized_file(&so), &json)?;
    let record = format!("{}\n{headers}", so.file_name().expect("has a name").to_string_lossy());
    write_atomically(&deps, record.as_bytes())?;
    Ok(Built { so, uninitialized })
}

/// Beside each .so: what the compiler said of its uninitialised locals, as JSON.
fn uninitialized_file(so: &Path) -> PathBuf {
    so.with_extension("uninitialized.json")
}

/// A build from before these files existed, or one whose file is unreadable, found none.
fn read_uninitialized(so: &Path) -> Vec<UninitializedUse> {
    std::fs::read(uninitialized_file(so)).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

/// The .so that `deps` names, when it exists and every header it lists is unchanged.
fn cached_build(deps: &Path) -> Option<PathBuf> {
    let record = std::fs::read_to_string(deps).ok()?;
    let mut lines = record.lines();
    let so = deps.with_file_name(lines.next()?);
    let unchanged = lines.all(|line| {
        let Some((hash, path)) = line.split_once('\t') else {
            return false;
        };
        std::fs::read(path).is_ok_and(|bytes| Key::new("file").add(&bytes).hex() == hash)
    });
    (unchanged && so.is_file()).then_some(so)
}

/// The prerequisites of a make-style depfile (`out.o: a.cpp b.h \`).
fn parse_depfile(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\n", " ");
    let Some((_, deps)) = joined.split_once(": ") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    out
}

/// Turns g++/clang++ output into a Compile (or Unsupported) error at the learner's file:line.
fn compile_error(path: &Path, log: &str, rt: &Runtime) -> EmuError {
    // Our cache paths mean nothing to a learner: name the header as the repository does.
    let runtime_prefix = format!("{}/", rt.dir.display());
    let log = log.replace(&runtime_prefix, "crates/gpubook-emu/runtime/");
    let learner = path.display().to_string();
    let first_error = log.lines().find_map(|l| {
        let (loc, msg) = l.split_once(": error: ").or_else(|| l.split_once(": fatal error: "))?;
        Some((loc.to_string(), msg.trim().to_string()))
    });
    let Some((loc, message)) = first_error else {
        return EmuError::Compile {
            file: path.into(),
            line: None,
            message: "the compiler failed".into(),
            log: first_lines(&log, LOG_LINES),
        };
    };
    let line_in_learner = |loc: &str| -> Option<u32> {
        let rest = loc.strip_prefix(&learner)?.strip_prefix(':')?;
        rest.split(':').next()?.parse().ok()
    };
    // The error's own location when it is in the learner's file; else the first place in the
    // learner's file the compiler mentions ("required from here", "In file included from").
    let line = line_in_learner(&loc).or_else(|| {
        log.lines().find_map(|l| {
            let at = l.find(&learner)?;
            line_in_learner(l[at..].split_whitespace().next()?.trim_end_matches([',', ':'])).or_else(|| line_in_learner(&l[at..]))
        })
    });
    // An undeclared CUDA intrinsic (and no "did you mean") is a feature the header lacks.
    if let (Some(name), Some(line)) = (undeclared_intrinsic(&message), line) {
        return EmuError::Unsupported { feature: format!("`{name}`"), file: path.into(), line };
    }
    EmuError::Compile { file: path.into(), line, message, log: first_lines(&log, LOG_LINES) }
}

/// `'__nanosleep' was not declared in this scope` → `__nanosleep`, unless the compiler
/// suggests a near name (then it is a typo, not a missing feature).
fn undeclared_intrinsic(message: &str) -> Option<&str> {
    if message.contains("did you mean") {
        return None;
    }
    let rest = message.strip_prefix('\'').or_else(|| message.strip_prefix('‘'))?;
    let end = rest.find(['\'', '’'])?;
    let (name, tail) = (&rest[..end], &rest[end..]);
    let undeclared = tail.contains("was not declared") || tail.contains("undeclared identifier");
    (undeclared && (name.starts_with("__") || name.starts_with("cuda"))).then_some(name)
}

fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines[..lines.len().min(n)].join("\n");
    if lines.len() > n {
        out.push_str(&format!("\n... ({} more lines)", lines.len() - n));
    }
    out
}

/// Writes `bytes` to `path` through a temporary file and a rename, creating the folder.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EmuError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_context(format!("creating {}", dir.display())))?;
    }
    let tmp = temp_name(path);
    std::fs::write(&tmp, bytes).map_err(io_context(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io_context(format!("moving {} into place", path.display())))
}

/// A name next to `path` that no other process or thread uses.
fn temp_name(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}-{n}", std::process::id()));
    path.with_file_name(name)
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A cache key: SHA-256 over length-prefixed parts, so it is the same for every build of
/// gpubook (std's hasher promises no such thing) and parts cannot run into each other. The
/// first 64 bits name the files: plenty for a cache.
struct Key(Sha256);

impl Key {
    fn new(domain: &str) -> Key {
        let mut k = Key(Sha256::new());
        k.add(domain.as_bytes());
        k
    }
    fn add(&mut self, bytes: &[u8]) -> &mut Key {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }
    fn hex(&self) -> String {
        self.0.clone().finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> Runtime {
        Runtime { dir: "/cache/emu-runtime-abc".into(), worker: "/cache/w".into(), pass: Err("none".into()) }
    }

    #[test]
    fn errors_map_to_the_learners_line() {
        let log = "kernels/ch03/vector_add.cu: In function 'void vector_add(const float*, float*, int)':\n\
                   kernels/ch03/vector_add.cu:7:5: error: 'i' was not declared in this scope\n\
                   \x20   7 |     c[i] = a[i];\n";
        match compile_error(Path::new("kernels/ch03/vector_add.cu"), log, &rt()) {
            EmuError::Compile { line, message, log, .. } => {
                assert_eq!(line, Some(7));
                assert_eq!(message, "'i' was not declared in this scope");
                assert!(log.contains("c[i] = a[i]"));
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn errors_in_our_headers_point_back_at_the_learner() {
        let log = "In file included from /cache/emu-runtime-abc/gpubook_device.h:3:\n\
                   k.cu:12:20:   required from here\n\
                   /cache/emu-runtime-abc/device/atomics.h:40:3: error: no matching function\n";
        match compile_error(Path::new("k.cu"), log, &rt()) {
            EmuError::Compile { line, log, .. } => {
                assert_eq!(line, Some(12));
                assert!(log.contains("crates/gpubook-emu/runtime/device/atomics.h:40"), "{log}");
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn missing_intrinsics_are_unsupported_typos_are_not() {
        let log = "k.cu:3:5: error: '__nanosleep' was not declared in this scope\n";
        assert!(matches!(
            compile_error(Path::new("k.cu"), log, &rt()),
            EmuError::Unsupported { line: 3, ref feature, .. } if feature == "`__nanosleep`"
        ));
        let log = "k.cu:3:5: error: '__syncthread' was not declared in this scope; did you mean '__syncthreads'?\n";
        assert!(matches!(compile_error(Path::new("k.cu"), log, &rt()), EmuError::Compile { .. }));
    }

    #[test]
    fn a_missing_compiler_says_how_to_get_one() {
        let e = find_toolchain(Some(Path::new("/nonexistent/c++"))).unwrap_err();
        assert!(e.contains("/nonexistent/c++") && e.contains("set CXX"), "{e}");
        assert!(find_toolchain(None).is_ok(), "this machine has a C++ compiler");
    }

    #[test]
    fn depfiles_parse() {
        let d = "/c/x.so: /c/x.cpp /r/gpubook_device.h \\\n /home/me/my\\ dir/common.cuh\n";
        assert_eq!(parse_depfile(d), [PathBuf::from("/c/x.cpp"), "/r/gpubook_device.h".into(), "/home/me/my dir/common.cuh".into()]);
    }

    #[test]
    fn keys_separate_parts() {
        assert_ne!(Key::new("k").add(b"ab").add(b"c").hex(), Key::new("k").add(b"a").add(b"bc").hex());
        assert_eq!(Key::new("k").add(b"x").hex(), Key::new("k").add(b"x").hex());
    }
}
