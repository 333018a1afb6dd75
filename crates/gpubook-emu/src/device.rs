//! `EmuDevice`: one emulated GPU. Memory operations go straight to the shared arena; module
//! loads rewrite and compile on the host; launches run in the device's worker process. What a GPU
//! would refuse at launch (limits, arguments against the kernel's parameters) is checked once,
//! above both backends, by `gpubook::gpu`; the worker keeps its own guard against bad requests.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::arena::{Arena, BufferInfo, Notice};
use crate::compile::{self, Runtime, Toolchain};
use crate::config::{EmuConfig, Mode};
use crate::counts::{AccessCounts, Writers};
use crate::error::{EmuError, io_context};
use crate::source::{self, Rewritten};
use crate::symbolize;
use crate::worker::{Failure, Reply, WireNote, Worker, describe_exit};
use gpubook_cudac::{DiagClass, Diagnostic, Finding, KernelRef, KernelSignature, find_kernel, parse_kernels, source_findings};

/// CUDA C source to load, as `gpubook::gpu` hands it over.
#[derive(Debug, Clone)]
pub struct KernelSource {
    /// Shown in messages and compiled into the debug info; need not exist on disk.
    pub path: PathBuf,
    pub text: String,
    /// Searched by `#include "..."` after the file's own folder.
    pub include_dirs: Vec<PathBuf>,
    /// Its `__global__` functions, as `parse_kernels(&text)` reads them (a caller that already
    /// parsed the text passes its result, so a load reads the text once).
    pub kernels: Vec<KernelSignature>,
}

impl KernelSource {
    /// Source text, parsed for its kernels.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> KernelSource {
        let text = text.into();
        KernelSource { path: path.into(), kernels: parse_kernels(&text), text, include_dirs: Vec::new() }
    }

    /// Reads a .cu file from disk.
    pub fn from_file(path: impl Into<PathBuf>) -> Result<KernelSource, EmuError> {
        let path = path.into();
        let text = std::fs::read_to_string(&path).map_err(io_context(format!("reading {}", path.display())))?;
        Ok(KernelSource::new(path, text))
    }
}

/// One mode's build of a module.
#[derive(Debug)]
struct Build {
    mode: Mode,
    so: PathBuf,
    findings: Vec<Finding>,
}

/// A loaded .cu file: its kernels, compiled on demand per mode.
#[derive(Debug)]
pub struct EmuModule {
    /// Unique in this process; the worker's name for the module (times two, plus the mode).
    id: u64,
    path: PathBuf,
    include_dirs: Vec<PathBuf>,
    rewritten: Rewritten,
    kernels: Vec<KernelSignature>,
    /// Each mode's .so, with what its compiler found (locals read before a store).
    builds: Mutex<Vec<Build>>,
    /// What the text shows (overlapping `extern __shared__` arrays).
    source_findings: Vec<Finding>,
    /// Template instantiations asked for by name (`reduce<256>`): this module's source with one
    /// more entry point each, built on first use.
    instances: Mutex<Vec<(String, Arc<EmuModule>)>>,
}

impl EmuModule {
    /// Every `__global__` function the file defines, with its parameters.
    pub fn kernels(&self) -> &[KernelSignature] {
        &self.kernels
    }

    /// What the source and its builds so far showed that is legal but most likely a bug, each
    /// once: the text's findings, then each build's compiler warnings (check mode keeps those).
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = self.source_findings.clone();
        let builds = self.builds.lock().unwrap_or_else(|p| p.into_inner()).iter().flat_map(|b| b.findings.clone()).collect::<Vec<_>>();
        // Template instances are modules of their own, built from this text.
        let instances: Vec<Arc<EmuModule>> =
            self.instances.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|(_, m)| m.clone()).collect();
        for f in builds.into_iter().chain(instances.iter().flat_map(|m| m.findings())) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }

    /// The kernel `name` launches: a plain name or a template instantiation (`reduce<256>`).
    pub fn kernel(&self, name: &str) -> Option<&KernelSignature> {
        find_kernel(&self.kernels, name).ok().map(|k| k.signature())
    }

    /// The source path, as given at load.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The kernel's id in the worker for `mode`.
    fn load_id(&self, mode: Mode) -> u64 {
        self.id * 2 + matches!(mode, Mode::Fast) as u64
    }
}

/// What a launch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchSpec {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory (`extern __shared__`) per block.
    pub shared_mem_bytes: u32,
    /// None: the device's configured mode.
    pub mode: Option<Mode>,
}

/// What a finished launch measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchStats {
    /// Time the worker spent running the grid (not compiling, not loading).
    pub wall: Duration,
    /// CUDA threads run: grid size times block size.
    pub threads: u64,
    pub mode: Mode,
    /// Memory traffic (check mode only; None in fast mode).
    pub counts: Option<AccessCounts>,
    /// Check mode: the checks this launch could not make, when the worker was refused the
    /// address space their shadow needs (`ulimit -v`, strict overcommit); warned once on stderr.
    pub unchecked: Option<String>,
}

/// Says once a process that check mode left something unchecked: a grader that expects a race
/// and sees none should not leave the learner guessing why.
fn warn_unchecked(what: &str) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "gpubook emulator: check mode could not check {what}. Raise the address-space limit \
             (`ulimit -v unlimited`) or allow overcommit (vm.overcommit_memory 0 or 1) to check them."
        );
    }
}

/// Properties of the emulated device. Its launch limits are a GPU's, from `gpubook::gpu`'s table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmuInfo {
    /// `gpubook emulator (CPU, N threads)`.
    pub name: String,
    pub ordinal: usize,
    /// Bytes of emulated device memory (address space; pages cost memory once written).
    pub total_memory: u64,
    /// Streaming multiprocessors the emulated device claims (`GPUBOOK_EMU_SMS`, default 16).
    /// With the per-SM limits below it decides how many blocks are resident at once, which is
    /// what a persistent kernel (blocks that wait for each other) may rely on. Fast mode runs
    /// blocks on `EmuConfig::threads` OS threads, whatever this says.
    pub sm_count: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    /// Shared memory of one SM, shared by the blocks resident on it.
    pub shared_memory_per_sm: u32,
    pub warp_size: u32,
    /// What `__CUDA_ARCH__` claims (8.0).
    pub compute_capability: (u32, u32),
    /// The mode launches use unless they choose.
    pub mode: Mode,
}

impl EmuInfo {
    /// Blocks of `threads_per_block` threads using `shared_bytes` of shared memory each that the
    /// device holds at once: per SM as many as its threads, block slots and shared memory allow.
    pub fn resident_blocks(&self, threads_per_block: u32, shared_bytes: u32) -> u64 {
        let warps = threads_per_block.max(1).div_ceil(self.warp_size) * self.warp_size;
        let mut per_sm = self.max_blocks_per_sm.min(self.max_threads_per_sm / warps);
        if let Some(by_shared) = self.shared_memory_per_sm.checked_div(shared_bytes) {
            per_sm = per_sm.min(by_shared);
        }
        per_sm.max(1) as u64 * self.sm_count as u64
    }
}

/// Per-SM limits of compute capability 8.0 (what `__CUDA_ARCH__` claims).
const MAX_THREADS_PER_SM: u32 = 2048;
const MAX_BLOCKS_PER_SM: u32 = 32;
const SHARED_PER_SM: u32 = 164 << 10;
/// Time the worker gets after its watchdog fires to describe the hang, before ours fires.
const WORKER_HANG_REPORT: Duration = Duration::from_secs(2);

/// Module ids, unique across devices so a module may be launched on any of them.
static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_WRITERS_FILE: AtomicU64 = AtomicU64::new(1);

/// The file a check-mode launch writes its writers to (`EmuConfig::writers`; the WRITERS
/// command, runtime/worker/races.h). Removed when dropped.
struct WritersFile(PathBuf);

impl WritersFile {
    /// Asks the worker to record the next launch's writers, when the device records them.
    fn ask(dev: &EmuDevice, slot: &mut WorkerSlot, mode: Mode) -> Result<Option<WritersFile>, EmuError> {
        if !dev.config.writers || mode != Mode::Check {
            return Ok(None);
        }
        let n = NEXT_WRITERS_FILE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("gpubook-writers-{}-{n}.bin", std::process::id()));
        dev.command(slot, &format!("WRITERS {}", path.display()), "asking for writers from")?;
        Ok(Some(WritersFile(path)))
    }

    /// Puts each buffer's writers into its entry of `counts`.
    fn attach(self, mut counts: AccessCounts) -> Result<AccessCounts, EmuError> {
        let bytes = std::fs::read(&self.0).map_err(io_context(format!("reading the launch's writers from {}", self.0.display())))?;
        let parsed = Writers::parse_file(&bytes).map_err(|e| EmuError::Worker(format!("the writers file {}: {e}", self.0.display())))?;
        for (addr, writers) in parsed {
            if let Some(b) = counts.buffers.iter_mut().find(|b| b.addr == addr) {
                b.writers = Some(writers);
            }
        }
        Ok(counts)
    }
}

impl Drop for WritersFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One emulated device. Cheap to share (`Send + Sync`); launches on one device run one at a
/// time, memory operations run concurrently with them, as on a GPU with no synchronisation.
pub struct EmuDevice {
    ordinal: usize,
    config: EmuConfig,
    arena: Mutex<Arena>,
    worker: Mutex<WorkerSlot>,
}

/// The worker process (started at the first launch) and what it has loaded.
#[derive(Default)]
struct WorkerSlot {
    worker: Option<Worker>,
    loaded: HashSet<u64>,
}

impl EmuDevice {
    /// Creates the device's memory. Nothing is compiled or started until first needed.
    pub fn new(ordinal: usize, config: EmuConfig) -> Result<EmuDevice, EmuError> {
        let arena = Arena::new(config.arena_bytes, ordinal)?;
        Ok(EmuDevice { ordinal, config, arena: Mutex::new(arena), worker: Mutex::new(WorkerSlot::default()) })
    }

    pub fn info(&self) -> EmuInfo {
        let threads = self.config.threads.max(1);
        EmuInfo {
            name: format!("gpubook emulator (CPU, {threads} thread{})", if threads == 1 { "" } else { "s" }),
            ordinal: self.ordinal,
            total_memory: self.arena().bytes(),
            sm_count: self.config.sms,
            max_threads_per_sm: MAX_THREADS_PER_SM,
            max_blocks_per_sm: MAX_BLOCKS_PER_SM,
            shared_memory_per_sm: SHARED_PER_SM,
            warp_size: 32,
            compute_capability: (8, 0),
            mode: self.config.mode,
        }
    }

    pub fn config(&self) -> &EmuConfig {
        &self.config
    }

    /// Allocates `bytes` of device memory named `label`, poisoned with 0xFF bytes. The address
    /// is 256-byte aligned and followed by unmapped guard space.
    pub fn alloc(&self, bytes: usize, elem_size: usize, label: &str) -> Result<u64, EmuError> {
        self.arena().alloc(bytes, elem_size, label)
    }

    /// Renames a live buffer in diagnostics (`buffer 'c'` instead of the name it was allocated with).
    pub fn relabel(&self, addr: u64, label: &str) -> Result<(), EmuError> {
        self.arena().relabel(addr, label)
    }

    /// Frees a buffer; an unknown address or a double free is an error that says which.
    pub fn free(&self, addr: u64) -> Result<(), EmuError> {
        self.arena().free(addr)
    }

    /// Host → device: `dst..dst+src.len()` must lie inside one live buffer.
    pub fn write(&self, dst: u64, src: &[u8]) -> Result<(), EmuError> {
        self.arena().write(dst, src)
    }

    /// Device → host.
    pub fn read(&self, src: u64, dst: &mut [u8]) -> Result<(), EmuError> {
        self.arena().read(src, dst)
    }

    /// Device → device (overlap allowed).
    pub fn copy(&self, dst: u64, src: u64, bytes: usize) -> Result<(), EmuError> {
        self.arena().copy(dst, src, bytes)
    }

    /// memset.
    pub fn fill(&self, dst: u64, byte: u8, bytes: usize) -> Result<(), EmuError> {
        self.arena().fill(dst, byte, bytes)
    }

    /// The live buffer holding `addr`, for messages.
    pub fn buffer_at(&self, addr: u64) -> Option<BufferInfo> {
        self.arena().buffer_at(addr)
    }

    /// Rewrites and compiles `source` for the configured mode (cached on disk by content), as
    /// NVRTC would compile it at load. The worker loads it at its first launch.
    pub fn load_module(&self, source: &KernelSource) -> Result<Arc<EmuModule>, EmuError> {
        let rewritten = source::rewrite(&source.path, &source.text, &source.kernels)?;
        let module = EmuModule {
            id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
            path: source.path.clone(),
            include_dirs: source.include_dirs.clone(),
            kernels: source.kernels.clone(),
            rewritten,
            builds: Mutex::new(Vec::new()),
            source_findings: source_findings(&source.path, &source.text),
            instances: Mutex::new(Vec::new()),
        };
        self.build(&module, self.config.mode)?;
        Ok(Arc::new(module))
    }

    /// Checks that `name` names one kernel of `module` (a plain name, or a template
    /// instantiation such as `reduce<256>`, which is compiled now, as NVRTC compiles a name
    /// expression): what `cuModuleGetFunction` and a name expression do on a GPU.
    pub fn load_kernel(&self, module: &EmuModule, name: &str) -> Result<(), EmuError> {
        let (instance, _) = self.entry(module, name)?;
        if let Some(m) = instance {
            self.build(&m, self.config.mode)?;
        }
        Ok(())
    }

    /// The instance module (None: `module` itself) and entry symbol that launch `name`.
    fn entry(&self, module: &EmuModule, name: &str) -> Result<(Option<Arc<EmuModule>>, String), EmuError> {
        if let Some(symbol) = module.rewritten.symbol(name) {
            return Ok((None, symbol.to_string()));
        }
        let at_file = |msg: String, line: Option<u32>| {
            let mut d = Diagnostic::new(DiagClass::LaunchConfig, msg);
            d.file = Some(module.path.clone());
            d.line = line;
            EmuError::Kernel(d)
        };
        let expr = match find_kernel(&module.kernels, name) {
            Err(e) => return Err(at_file(e.to_string(), None)),
            Ok(KernelRef::Template { expr, signature }) => (expr, signature.line),
            // `ns::name`: exported under its plain name.
            Ok(k) => match module.rewritten.symbol(&k.signature().name) {
                Some(symbol) => return Ok((None, symbol.to_string())),
                None => return Err(at_file(format!("`{name}` cannot be launched by the emulator"), Some(k.signature().line))),
            },
        };
        let mut instances = module.instances.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, m)) = instances.iter().find(|(e, _)| *e == expr.0) {
            let symbol = m.rewritten.symbol(&expr.0).expect("an instance exports its expression").to_string();
            return Ok((Some(m.clone()), symbol));
        }
        let rewritten = module.rewritten.with_instance(&module.path, expr.1, &expr.0);
        let symbol = rewritten.symbol(&expr.0).expect("just added").to_string();
        let m = Arc::new(EmuModule {
            id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
            path: module.path.clone(),
            include_dirs: module.include_dirs.clone(),
            kernels: module.kernels.clone(),
            rewritten,
            builds: Mutex::new(Vec::new()),
            source_findings: Vec::new(),
            instances: Mutex::new(Vec::new()),
        });
        instances.push((expr.0, m.clone()));
        Ok((Some(m), symbol))
    }

    /// Runs `kernel` of `module` over the grid. `args` holds each parameter's bytes as
    /// cuLaunchKernel's kernelParams would point at them (8 bytes for a device pointer).
    pub fn launch(&self, module: &EmuModule, kernel: &str, launch: &LaunchSpec, args: &[Vec<u8>]) -> Result<LaunchStats, EmuError> {
        let mode = launch.mode.unwrap_or(self.config.mode);
        let (instance, symbol) = self.entry(module, kernel)?;
        let module = instance.as_deref().unwrap_or(module);
        let (so, rt) = self.build(module, mode)?;

        let threads = if mode == Mode::Fast { self.config.threads.max(1) } else { 1 };
        let wire_mode = if mode == Mode::Check && self.config.bench_engine_only { "engine".to_string() } else { mode.to_string() };
        let line = launch_line(module.load_id(mode), &symbol, launch, &wire_mode, threads, args);

        let mut slot = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        self.ready_worker(&mut slot, &rt)?;
        self.ensure_loaded(&mut slot, module, mode, &so)?;
        let writers = WritersFile::ask(self, &mut slot, mode)?;
        let started = Instant::now();
        let deadline = started + self.config.watchdog + WORKER_HANG_REPORT;
        let worker = slot.worker.as_mut().expect("ready_worker started it");
        match worker.request(&line, Some(deadline)) {
            Ok(reply) if reply.ok => Ok(LaunchStats {
                unchecked: reply.unchecked.inspect(|what| warn_unchecked(what)),
                wall: reply.ns.map(Duration::from_nanos).unwrap_or_else(|| started.elapsed()),
                threads: launch.grid.iter().chain(&launch.block).map(|&d| d as u64).product(),
                mode,
                counts: match (reply.counts, writers) {
                    (Some(counts), Some(file)) if reply.writers => Some(file.attach(counts)?),
                    (counts, _) => counts,
                },
            }),
            Ok(reply) => {
                let err = self.failure(&reply, module, &so, &rt);
                // After a crash, a hang or a trap the worker's state is suspect: start afresh.
                // One that said it is exiting may not have exited yet: never send it more.
                let suspect = reply.exiting
                    || matches!(
                        reply.kernel_class(),
                        Some(DiagClass::Crash | DiagClass::StackOverflow | DiagClass::Hang | DiagClass::TooSlow | DiagClass::Trap)
                    );
                if suspect || !slot.worker.as_mut().is_some_and(Worker::alive) {
                    self.retire(&mut slot);
                }
                Err(err)
            }
            Err(Failure::TimedOut) => Err(self.hang(&mut slot, kernel, module, &so, &rt)),
            Err(Failure::Died { status, stderr }) => {
                // Died without a report (its crash handler did not get to write one).
                self.retire(&mut slot);
                let what = format!("running `{kernel}`, the emulator's worker process {}", describe_exit(status));
                let mut d = Diagnostic::new(DiagClass::Crash, what);
                d.file = Some(module.path.clone());
                d.notes.extend(stderr_notes(&stderr));
                Err(EmuError::Kernel(d))
            }
            Err(Failure::Io(e)) => {
                self.retire(&mut slot);
                Err(e)
            }
        }
    }

    /// A `__device__` or `__constant__` variable of `module` (`cuModuleGetGlobal`): its address
    /// in the worker and its size in bytes, from the module's symbol table. The variables live in
    /// the worker's copy of the module (the device's mode), not in the arena: read and write
    /// them with [`read_global`](Self::read_global) and [`write_global`](Self::write_global).
    /// They start as the source initialises them, again after a crash restarts the worker, and
    /// a template instantiation (`reduce<256>`) is built apart with variables of its own.
    pub fn global(&self, module: &EmuModule, name: &str) -> Result<(u64, usize), EmuError> {
        let reply = self.query(module, &format!("GLOBAL {} {name}", module.load_id(self.config.mode)))?;
        match (reply.addr, reply.bytes) {
            (Some(addr), Some(bytes)) => Ok((addr, bytes as usize)),
            _ => Err(EmuError::Worker("GLOBAL: a reply without addr and bytes".into())),
        }
    }

    /// Copies `dst.len()` bytes of a variable from [`global`](Self::global), from `addr` on.
    pub fn read_global(&self, module: &EmuModule, addr: u64, dst: &mut [u8]) -> Result<(), EmuError> {
        for (k, chunk) in dst.chunks_mut(GLOBAL_CHUNK).enumerate() {
            let at = addr + (k * GLOBAL_CHUNK) as u64;
            let reply = self.query(module, &format!("PEEK {at:#x} {}", chunk.len()))?;
            let data = reply.data.unwrap_or_default();
            let bytes: Vec<u8> = (0..data.len() / 2).filter_map(|i| u8::from_str_radix(&data[2 * i..2 * i + 2], 16).ok()).collect();
            if bytes.len() != chunk.len() {
                return Err(EmuError::Worker(format!("PEEK: {} bytes asked, {} returned", chunk.len(), bytes.len())));
            }
            chunk.copy_from_slice(&bytes);
        }
        Ok(())
    }

    /// Copies `src` into a variable from [`global`](Self::global), from `addr` on.
    pub fn write_global(&self, module: &EmuModule, addr: u64, src: &[u8]) -> Result<(), EmuError> {
        for (k, chunk) in src.chunks(GLOBAL_CHUNK).enumerate() {
            self.query(module, &format!("POKE {:#x} {}", addr + (k * GLOBAL_CHUNK) as u64, hex(chunk)))?;
        }
        Ok(())
    }

    /// A command about `module`'s variables, with the worker started and the module loaded. A
    /// refusal (no such variable) is an error that leaves the worker running.
    fn query(&self, module: &EmuModule, line: &str) -> Result<Reply, EmuError> {
        let mode = self.config.mode;
        let (so, rt) = self.build(module, mode)?;
        let mut slot = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        self.ready_worker(&mut slot, &rt)?;
        self.ensure_loaded(&mut slot, module, mode, &so)?;
        let worker = slot.worker.as_mut().expect("ready_worker started it");
        match worker.request(line, Some(Instant::now() + Duration::from_secs(30))) {
            Ok(r) if r.ok => Ok(r),
            Ok(r) => Err(EmuError::Memory(r.message.unwrap_or_else(|| "the worker refused".into()))),
            Err(e) => {
                self.retire(&mut slot);
                let verb = line.split(' ').next().unwrap_or(line);
                Err(EmuError::Worker(match e {
                    Failure::TimedOut => format!("`{verb}`: no answer within 30 s"),
                    Failure::Died { status, stderr } => format!("`{verb}`: it {}{}", describe_exit(status), tail_for_message(&stderr)),
                    Failure::Io(e) => e.to_string(),
                }))
            }
        }
    }

    fn arena(&self) -> MutexGuard<'_, Arena> {
        // A panic while holding the lock leaves the bookkeeping consistent (every mutation is
        // one insert or remove), so a poisoned lock is still usable.
        self.arena.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The module's .so for `mode`, compiling it the first time. A check-mode build keeps where
    /// a local may be read before anything is stored to it (uninitialized.rs) as findings.
    fn build(&self, module: &EmuModule, mode: Mode) -> Result<(PathBuf, Runtime), EmuError> {
        let tc: Toolchain = compile::toolchain(&self.config)?;
        let rt = compile::runtime(&self.config, &tc)?;
        let mut builds = module.builds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = builds.iter().find(|b| b.mode == mode) {
            return Ok((b.so.clone(), rt));
        }
        let built = compile::compile_module(&self.config, &tc, &rt, &module.path, &module.include_dirs, &module.rewritten, mode)?;
        let findings = built.uninitialized.iter().map(|u| u.finding()).collect();
        builds.push(Build { mode, so: built.so.clone(), findings });
        Ok((built.so, rt))
    }

    /// Starts the worker if there is none (telling it the device's shape, every live buffer and
    /// what the host wrote), else tells it what changed since the last launch.
    fn ready_worker(&self, slot: &mut WorkerSlot, rt: &Runtime) -> Result<(), EmuError> {
        let fresh = slot.worker.is_none();
        let notices: Vec<Notice> = if fresh {
            let (fd, base, bytes, notices) = {
                let mut arena = self.arena();
                (arena.fd(), arena.base(), arena.bytes(), arena.fresh_worker_notices())
            };
            slot.worker = Some(Worker::spawn(&rt.worker, fd, base, bytes)?);
            slot.loaded.clear();
            // The worker's own watchdog fires first and can say where the kernel spins; ours
            // (the deadline in `launch`) is the backstop.
            let ms = self.config.watchdog.as_millis().max(1);
            self.command(slot, &format!("TIMEOUT {ms}"), "starting")?;
            let i = self.info();
            let device = format!("DEVICE {} {} {} {}", i.sm_count, i.max_threads_per_sm, i.max_blocks_per_sm, i.shared_memory_per_sm);
            self.command(slot, &device, "starting")?;
            notices
        } else {
            self.arena().take_notices()
        };
        for notice in notices {
            let line = match &notice {
                Notice::Alloc(b) => format!("ALLOC {:#x} {} {} {}", b.addr, b.bytes, b.elem_size, b.label),
                Notice::Free(addr) => format!("FREE {addr:#x}"),
                Notice::Unwritten(addr, bytes) => format!("UNWRITTEN {addr:#x} {bytes}"),
                Notice::Wrote(addr, bytes) => format!("WROTE {addr:#x} {bytes}"),
            };
            self.command(slot, &line, if fresh { "starting" } else { "updating" })?;
        }
        Ok(())
    }

    fn ensure_loaded(&self, slot: &mut WorkerSlot, module: &EmuModule, mode: Mode, so: &Path) -> Result<(), EmuError> {
        let id = module.load_id(mode);
        if slot.loaded.contains(&id) {
            return Ok(());
        }
        self.command(slot, &format!("LOAD {id} {}", so.display()), "loading a module into")?;
        slot.loaded.insert(id);
        Ok(())
    }

    /// A bookkeeping command (ALLOC, FREE, LOAD): quick, so a generous fixed deadline.
    fn command(&self, slot: &mut WorkerSlot, line: &str, doing: &str) -> Result<(), EmuError> {
        let worker = slot.worker.as_mut().expect("started");
        let result = worker.request(line, Some(Instant::now() + Duration::from_secs(30)));
        let problem = match result {
            Ok(r) if r.ok => return Ok(()),
            Ok(r) => r.message.unwrap_or_else(|| "it refused without saying why".into()),
            Err(Failure::TimedOut) => "it did not answer within 30 s".into(),
            Err(Failure::Died { status, stderr }) => {
                format!("it {}{}", describe_exit(status), tail_for_message(&stderr))
            }
            Err(Failure::Io(e)) => e.to_string(),
        };
        let stderr = worker.stderr_tail();
        self.retire(slot);
        let verb = line.split(' ').next().unwrap_or(line);
        Err(EmuError::Worker(format!(
            "{doing} the worker (`{verb}`): {problem}{}",
            if problem.contains(stderr.trim()) { String::new() } else { tail_for_message(&stderr) }
        )))
    }

    fn retire(&self, slot: &mut WorkerSlot) {
        if let Some(mut w) = slot.worker.take() {
            w.kill();
        }
        slot.loaded.clear();
    }

    /// The watchdog fired: ask the worker where it is, then kill it.
    fn hang(&self, slot: &mut WorkerSlot, kernel: &str, module: &EmuModule, so: &Path, rt: &Runtime) -> EmuError {
        let worker = slot.worker.as_mut().expect("running");
        worker.nudge();
        let report = worker.await_reply(Some(Instant::now() + crate::worker::HANG_REPORT_GRACE));
        self.retire(slot);
        let secs = self.config.watchdog.as_secs_f64();
        let limit = format!("`{kernel}` did not finish within {secs} s, the emulator's watchdog (GPUBOOK_EMU_WATCHDOG_S)");
        let mut d = match report {
            Ok(reply) if !reply.ok => match self.failure(&reply, module, so, rt) {
                EmuError::Kernel(mut d) => {
                    d.notes.insert(0, limit);
                    d
                }
                _ => Diagnostic::new(DiagClass::Hang, limit),
            },
            _ => {
                let mut d = Diagnostic::new(DiagClass::Hang, limit);
                d.file = Some(module.path.clone());
                d
            }
        };
        if d.class != DiagClass::TooSlow {
            d.class = DiagClass::Hang;
            d.notes.push(
                "look for a loop whose condition never changes for some thread, or a thread waiting \
                 for a value that nothing writes (blocks run together only as many as the device \
                 holds at once)"
                    .into(),
            );
        }
        EmuError::Kernel(d)
    }

    /// A failure reply → the learner's diagnostic, with file:line from the pc.
    fn failure(&self, reply: &Reply, module: &EmuModule, so: &Path, rt: &Runtime) -> EmuError {
        let message = reply.message.clone().unwrap_or_else(|| "the launch failed".into());
        let Some(class) = reply.kernel_class() else {
            return EmuError::Worker(message);
        };
        let so = reply.so.as_deref().filter(|s| !s.is_empty()).map(Path::new).unwrap_or(so);
        let pcs: Vec<u64> = reply.pc.into_iter().chain(reply.frames.iter().copied()).filter(|&pc| pc != 0).collect();
        let loc = symbolize::locate(so, &pcs, &rt.dir, &module.path);
        let mut d = Diagnostic::new(class, message);
        d.block = reply.block;
        d.thread = reply.thread;
        match loc {
            Some(l) => {
                d.file = Some(l.file);
                d.line = Some(l.line);
            }
            None => d.file = Some(module.path.clone()),
        }
        for note in &reply.more {
            d.notes.push(self.note(note, so, rt, &module.path));
        }
        EmuError::Kernel(d)
    }

    /// One entry of `more` as a sentence: who, what, and where.
    fn note(&self, note: &WireNote, so: &Path, rt: &Runtime, source: &Path) -> String {
        let (text, note_so, pc, block, thread) = match note {
            WireNote::Text(s) => return s.clone(),
            WireNote::Place { what, so, pc, block, thread } => (what, so, pc, block, thread),
        };
        let xyz = |v: [u32; 3]| format!("({},{},{})", v[0], v[1], v[2]);
        let mut out = String::new();
        if let (Some(t), Some(b)) = (thread, block) {
            let who = format!("thread {} of block {}", xyz(*t), xyz(*b));
            if !text.contains(&who) {
                out.push_str(&format!("{who}: "));
            }
        }
        out.push_str(text);
        let note_so = note_so.as_deref().filter(|s| !s.is_empty()).map(Path::new).unwrap_or(so);
        if let Some(pc) = pc.filter(|&pc| pc != 0)
            && let Some(l) = symbolize::locate(note_so, &[pc], &rt.dir, source)
        {
            out.push_str(&format!(", at {}:{}", l.file.display(), l.line));
        }
        out
    }
}

impl Drop for EmuDevice {
    fn drop(&mut self) {
        // The worker goes first: it maps the arena, which is unmapped after this.
        let slot = self.worker.get_mut().unwrap_or_else(|p| p.into_inner());
        slot.worker = None;
    }
}

/// Bytes a PEEK or POKE moves at once (the worker's reply holds at most 16 KiB as hex).
const GLOBAL_CHUNK: usize = 16 << 10;

/// `LAUNCH <module> <kernel> gx gy gz bx by bz <dyn shared> <mode> <threads> <nargs> <arg hex>...`
/// `mode`: check, fast, or engine (check mode's engine with its access checks off, for emu-bench).
fn launch_line(id: u64, kernel: &str, l: &LaunchSpec, mode: &str, threads: usize, args: &[Vec<u8>]) -> String {
    let [gx, gy, gz] = l.grid;
    let [bx, by, bz] = l.block;
    let mut line = format!("LAUNCH {id} {kernel} {gx} {gy} {gz} {bx} {by} {bz} {} {mode} {threads} {}", l.shared_mem_bytes, args.len());
    for a in args {
        line.push(' ');
        line.push_str(&hex(a));
    }
    line
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The worker's last stderr lines as notes.
fn stderr_notes(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(8);
    lines[start..].iter().map(|l| format!("worker: {l}")).collect()
}

fn tail_for_message(stderr: &str) -> String {
    let notes = stderr_notes(stderr);
    if notes.is_empty() { String::new() } else { format!("\n{}", notes.join("\n")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<EmuDevice>();
        assert_send_sync::<EmuModule>();
    }
}
