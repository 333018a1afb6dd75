//! `gpubook run FILE.cu --kernel NAME --grid G --block B --arg ...`: launch kernels with buffers
//! and values described on the command line, then print the diagnostics (on the emulator), the
//! memory traffic (the emulator's check mode counts it) and a summary of every buffer. For
//! experiments, and for the book's snippets.
//!
//! An argument is a buffer `TYPE[N]:INIT`, a value `TYPE=X` or `@NAME`, a buffer an earlier
//! launch made (`gpubook_labs::launch_spec::spec` has the grammar: CUDA vector types such as float4,
//! inits zeros, ones, iota, random, uninit, numbers, or an .npy file). `--then 'KERNEL grid=..
//! block=.. ARG...'` launches again on the same buffers (scan, then add the block sums);
//! `--save NAME=FILE.npy` writes a buffer for numpy. `--symbol NAME=TYPE[N]:INIT` or
//! `--symbol NAME=TYPE=X` writes a `__constant__` or `__device__` variable before the first
//! launch (its size on the device must match); each variable is printed after the launches like
//! a buffer, and `--save` takes it too (a `__device__` counter a kernel increments). With no
//! `--kernel`, the file's own `// @symbol:` and `// @launch:` lines run and its `// @expect:`
//! lines are checked (crates/gpubook/tests/fidelity/README.md).
//! `--map FILE.json` writes what the run touched, for the served book's figure; with it or
//! `--writers N` the emulator's check mode also records which thread wrote each element (a GPU,
//! and fast mode, record no writers: the map and the output say so).
//! `--ranks R` plays R ranks on the one device, as chapters 12-14 do: every launch runs once per
//! rank, each rank has its own copy of every buffer, `i32=rank` is the launching rank and
//! `peers:@name` (or `peers:f32[N]:INIT`) the table of every rank's copy of a buffer.
//! Example: `gpubook run vector_add.cu --kernel vector_add --grid 4 --block 256 \
//!           --arg 'f32[1000]:iota' --arg 'f32[1000]:ones' --arg 'f32[1000]:uninit' --arg i32=1000`

use anyhow::{Context, bail};
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{AccessCounts, BackendKind, Gpu};
use gpubook_labs::launch_spec::{ElemType, LaunchLine, Script, Session, SymbolSpec, npy, parse_arg, parse_launch, parse_symbol, spec};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The .cu file.
    file: PathBuf,
    /// The `__global__` function to launch; without it, the file's `// @launch:` lines run.
    #[arg(long)]
    kernel: Option<String>,
    /// Blocks: X or X,Y or X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Threads a block: X or X,Y or X,Y,Z.
    #[arg(long, default_value = "32")]
    block: String,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    shared: u32,
    /// One per kernel parameter, in order: `f32[1000]:random`, `float4[256]:iota`, `i32=1000`,
    /// `f32[]:x.npy`, `@out` (a buffer of an earlier launch); with --ranks, `i32=rank`,
    /// `i32=ranks` and `peers:@out` or `peers:f32[64]:zeros` (every rank's copy, for `T* const*`).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Another launch after the first, on the same buffers: 'KERNEL grid=X block=X shared=N ARG...'.
    #[arg(long = "then")]
    then: Vec<String>,
    /// Set a `__constant__` or `__device__` variable before the first launch, and print it
    /// after the launches: `coeffs=f32[16]:iota`, `scale=f32=2.5`, `count=u32[1]:0`
    /// (`NAME=TYPE[N]:uninit` keeps the source's initial values and only reads it back).
    #[arg(long = "symbol")]
    symbols: Vec<String>,
    /// Write a buffer (named after its kernel parameter) or a variable of --symbol to an .npy
    /// file: `--save out=out.npy` (with several ranks rank 0's copy; `out@1=out1.npy` rank 1's).
    #[arg(long = "save")]
    save: Vec<String>,
    /// Run on the emulator in this mode (check: every access checked and counted; fast: blocks
    /// in parallel).
    #[arg(long)]
    mode: Option<Mode>,
    /// Ranks sharing the device: every launch runs once per rank (rank 0 first), every buffer
    /// has a copy per rank; `i32=rank` passes the rank, `i32=ranks` their number, `peers:@NAME`
    /// the table of every rank's copy (a `T* const*` parameter). Default: the file's
    /// `// @ranks:`, or 1.
    #[arg(long)]
    ranks: Option<usize>,
    /// Elements of each buffer to print.
    #[arg(long, default_value_t = 8)]
    show: usize,
    /// Write what the run touched as JSON (each buffer's elements the launches wrote, changed or
    /// left unwritten, its access counts and, in the emulator's check mode, the block and thread
    /// that wrote each element): the served book draws it beside a run's output.
    #[arg(long)]
    map: Option<PathBuf>,
    /// Print which block and thread wrote each of the first N elements of every buffer the
    /// launches wrote (the emulator's check mode records it; default 8).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "8")]
    writers: Option<usize>,
}

/// The launches asked for: `--kernel` and its options, then each `--then`; or the file's script.
fn launches(a: &Args) -> anyhow::Result<(Vec<LaunchLine>, Vec<String>, Option<Script>)> {
    let cwd = Path::new(".");
    let Some(kernel) = &a.kernel else {
        if !a.args.is_empty() || !a.then.is_empty() || !a.symbols.is_empty() {
            bail!("--arg, --then and --symbol need --kernel (without it, the file's own `// @launch:` lines run)");
        }
        let text = std::fs::read_to_string(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
        let script = Script::parse(&text, a.file.parent().unwrap_or(cwd)).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
        if script.launches.is_empty() {
            bail!("{} has no `// @launch:` lines: say what to run with --kernel and --arg", a.file.display());
        }
        let raw = script.launches.iter().map(|l| format!("{l:?}")).collect();
        return Ok((script.launches.clone(), raw, Some(script)));
    };
    let args = a.args.iter().map(|x| parse_arg(x, cwd).map_err(anyhow::Error::msg)).collect::<anyhow::Result<_>>()?;
    let first = LaunchLine {
        kernel: kernel.clone(),
        grid: spec::parse_dims(&a.grid).map_err(anyhow::Error::msg)?,
        block: spec::parse_dims(&a.block).map_err(anyhow::Error::msg)?,
        shared: a.shared,
        args,
    };
    let mut lines = vec![first];
    for t in &a.then {
        lines.push(parse_launch(t, cwd).map_err(|e| anyhow::anyhow!("--then '{t}': {e}"))?);
    }
    Ok((lines, a.args.clone(), None))
}

/// Refuses buffers the device cannot hold, before anything is allocated, naming the argument.
fn check_memory(gpu: &Gpu, lines: &[LaunchLine], raw: &[String], ranks: usize) -> anyhow::Result<()> {
    let total = gpu.info().total_memory;
    let mut sum = 0u64;
    for (i, arg) in lines.iter().flat_map(|l| &l.args).enumerate() {
        let bytes = arg.bytes().saturating_mul(ranks as u64);
        if bytes > total {
            let text = raw.get(i).cloned().unwrap_or_else(|| format!("{arg:?}"));
            bail!("`{text}` needs {} of device memory; the device has {}", gib(bytes), gib(total));
        }
        sum = sum.saturating_add(bytes);
    }
    if sum > total {
        bail!("the buffers need {} of device memory together; the device has {}", gib(sum), gib(total));
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB ({bytes} bytes)", bytes as f64 / (1u64 << 30) as f64)
}

/// The device: the emulator in `mode` when one is asked for, else whatever `Gpu::new` picks. On
/// the emulator, check-mode launches record who wrote each element when `writers` (`--map`,
/// `--writers`): it costs a pass over the written buffers, so only then.
fn open_gpu(mode: Option<Mode>, writers: bool) -> anyhow::Result<Gpu> {
    let emulated = mode.is_some() || (writers && gpubook::gpu::resolve_backend()?.kind == BackendKind::Emulator);
    if !emulated {
        return Ok(Gpu::new()?);
    }
    let config = EmuConfig::from_env();
    Ok(Gpu::emulated(0, EmuConfig { mode: mode.unwrap_or(config.mode), writers, ..config })?)
}

/// Why a successful launch came back without writers.
fn why_no_writers(gpu: &Gpu) -> String {
    match gpu.backend() {
        BackendKind::Cuda => "a GPU does not record which thread wrote what; run on the emulator \
            (GPUBOOK_BACKEND=emu) to see the writers"
            .into(),
        BackendKind::Emulator => "the emulator's fast mode records no writers; run with --mode check".into(),
    }
}

/// `NAME=FILE.npy`.
fn parse_save(s: &str) -> anyhow::Result<(String, PathBuf)> {
    let (name, path) = s.split_once('=').with_context(|| format!("--save `{s}`: write NAME=FILE.npy"))?;
    Ok((name.trim().to_string(), PathBuf::from(path.trim())))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (lines, raw, script) = launches(&a)?;
    let ranks = a.ranks.or(script.as_ref().map(|s| s.ranks).filter(|&r| r > 0)).unwrap_or(1);
    if ranks == 0 {
        bail!("--ranks 0: a launch needs at least one rank");
    }
    let symbols: Vec<SymbolSpec> = match &script {
        Some(s) => s.symbols.clone(),
        None => a
            .symbols
            .iter()
            .map(|s| parse_symbol(s, Path::new(".")).map_err(|e| anyhow::anyhow!("--symbol {e}")))
            .collect::<anyhow::Result<_>>()?,
    };
    let saves: Vec<(String, PathBuf)> = a.save.iter().map(|s| parse_save(s)).collect::<anyhow::Result<_>>()?;
    let wants_writers = a.map.is_some() || a.writers.is_some();
    let gpu = open_gpu(a.mode, wants_writers)?;
    check_memory(&gpu, &lines, &raw, ranks)?;
    let mut session = Session::with_ranks(gpu.clone(), &a.file, ranks)?;
    if a.map.is_some() {
        session.keep_initial();
    }
    for s in &symbols {
        session.set_symbol(s)?;
    }
    let mut code = ExitCode::SUCCESS;
    let mut map = touch_map::TouchMap::default();
    'lines: for line in &lines {
        println!("{} on {} ({})", line.kernel, gpu.info().name, gpu.backend());
        for (rank, outcome) in session.launch(line)?.into_iter().enumerate() {
            let on = if ranks > 1 { Some(rank) } else { None };
            let counts = outcome.as_ref().ok().and_then(|l| l.counts.as_ref());
            map.launched(line, on, counts, outcome.is_ok());
            if outcome.is_ok() && counts.is_none() {
                map.writers_unknown(&why_no_writers(&gpu));
            }
            let who = on.map(|r| format!("rank {r}: ")).unwrap_or_default();
            match outcome {
                Ok(launched) => {
                    println!("{who}launched grid {:?} × block {:?}: ok", line.grid, line.block);
                    if let Some(counts) = &launched.counts {
                        print!("{}", counts_table(counts));
                    }
                }
                Err(e) => {
                    println!("{who}{e}");
                    code = ExitCode::FAILURE;
                    break 'lines;
                }
            }
        }
    }
    if let Some(path) = &a.map {
        // After a failed launch the buffers may not be readable: the diagnostic above is what matters.
        match map.finish(&session, &gpu.backend().to_string()) {
            Ok(json) => std::fs::write(path, json.to_string()).with_context(|| format!("writing {}", path.display()))?,
            Err(e) => println!("(no map of what the run touched: {e:#})"),
        }
    }
    for rank in 0..ranks {
        if ranks > 1 {
            println!("rank {rank}:");
        }
        for b in session.buffers() {
            println!("{} ({}[{}]): {}", b.name, b.ty.c_name(), b.n, summary(b.ty, &session.read_rank(b, rank)?, a.show, b.uninit()));
        }
    }
    for s in session.symbols() {
        println!("{} (variable, {}[{}]): {}", s.name, s.ty.c_name(), s.n, summary(s.ty, &session.read_symbol(s)?, a.show, false));
    }
    if let Some(n) = a.writers {
        print!("{}", map.writers_text(n));
    }
    for (name, path) in &saves {
        let (ty, data) = session
            .contents(name)
            .with_context(|| format!("--save {name}: no buffer or variable `{name}` (there are: {})", session.names().join(", ")))??;
        std::fs::write(path, npy::write(ty, &data)).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {name} to {}", path.display());
    }
    if let Some(script) = script.filter(|s| !s.expects.is_empty())
        && code == ExitCode::SUCCESS
    {
        let problems = script.check(&session)?;
        for p in &problems {
            println!("expectation not met: {p}");
        }
        if problems.is_empty() {
            println!("all {} expectation(s) of the file met", script.expects.len());
        } else {
            code = ExitCode::FAILURE;
        }
    }
    Ok(code)
}

/// First elements, then min, max and sum of the numbers, and how many are NaN (left out of
/// those, and said: a NaN is often the bug); in an uninit buffer, 0xFF poison (never written)
/// counted apart (elsewhere all ones is a value, -1).
fn summary(ty: ElemType, data: &[u8], show: usize, uninit: bool) -> String {
    let elems = data.len() / ty.size().max(1);
    let poisoned = |e: &[u8]| uninit && e.iter().all(|&x| x == 0xFF);
    let poison = data.chunks_exact(ty.size()).filter(|e| poisoned(e)).count();
    let scalars: Vec<f64> = data.chunks_exact(ty.base.size()).filter(|x| !poisoned(x)).map(|x| ty.base.decode(x)).collect();
    let nans = scalars.iter().filter(|x| x.is_nan()).count();
    let (lo, hi, sum) =
        scalars.iter().filter(|x| !x.is_nan()).fold((f64::MAX, f64::MIN, 0.0), |(lo, hi, s), &x| (lo.min(x), hi.max(x), s + x));
    let range = if lo <= hi { format!("min {}, max {}, sum {}", number(lo), number(hi), number(sum)) } else { "no numbers".into() };
    let nan = match nans {
        0 => String::new(),
        n => format!("; {n} NaN{} (not in min, max and sum)", if n == 1 { "" } else { "s" }),
    };
    let unwritten = if poison > 0 { format!("; {poison} still hold the 0xFF poison (never written?)") } else { String::new() };
    let patterned = scalars.iter().filter(|&&x| uninitialised_local(x)).count();
    let pattern = match patterned {
        0 => String::new(),
        n => format!("; {n} near -1.7e38, check mode's pattern for a local variable that was never set"),
    };
    format!("{elems} elements: {} {range}{nan}{unwritten}{pattern}", gpubook_labs::launch_spec::session::show(ty, data, show))
}

/// Plain digits up to 1e15 (sums of counts stay exact); past that or below 1e-4, eight
/// significant digits and an exponent (`-1.6947395e38`).
fn number(x: f64) -> String {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        return format!("{x}");
    }
    let text = format!("{x:.7e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    format!("{}e{exponent}", mantissa.trim_end_matches('0').trim_end_matches('.'))
}

/// A float left at, or a few additions from, the 0xFE bytes check mode gives a local declared
/// without a value (gpubook-emu's src/uninitialized.rs).
fn uninitialised_local(x: f64) -> bool {
    let near = |pattern: f64| (x / pattern - 1.0).abs() < 1e-6;
    near(f32::from_bits(0xFEFE_FEFE) as f64) || near(f64::from_bits(0xFEFE_FEFE_FEFE_FEFE))
}

/// The emulator's access counts as a table under 88 columns.
fn counts_table(c: &AccessCounts) -> String {
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    let per = |a: u64, b: u64| if b == 0 { "-".to_string() } else { format!("{:.2}", a as f64 / b as f64) };
    let mut t = String::from("memory traffic (counted by check mode, warp by warp):\n");
    t += &format!("  {:<16}{:>10}{:>12}{:>10}{:>13}{:>12}\n", "global memory", "requests", "bytes", "sectors", "sectors/req", "efficiency");
    for (name, g) in [("loads", c.global.loads), ("stores", c.global.stores)] {
        let eff = if g.sectors == 0 { "-".into() } else { pct(g.efficiency()) };
        t += &format!("  {name:<16}{:>10}{:>12}{:>10}{:>13}{eff:>12}\n", g.requests, g.bytes, g.sectors, per(g.sectors, g.requests));
    }
    t += &format!("  {:<16}{:>10}\n", "atomics", c.global.atomics);
    t += &format!("  {:<16}{:>10}{:>12}{:>13}{:>16}\n", "shared memory", "requests", "bytes", "wavefronts", "bank conflicts");
    for (name, s) in [("loads", c.shared.loads), ("stores", c.shared.stores)] {
        t += &format!("  {name:<16}{:>10}{:>12}{:>13}{:>16}\n", s.requests, s.bytes, s.wavefronts, s.bank_conflicts());
    }
    t += &format!("  {:<16}{:>10}\n", "atomics", c.shared.atomics);
    let (lo, hi) = (&c.per_thread_min, &c.per_thread_max);
    t += &format!("  {:<16}{:>10}{:>12}   ({} threads)\n", "per thread", "min", "max", c.threads);
    for (name, a, b) in [
        ("global loads", lo.global_loads, hi.global_loads),
        ("global stores", lo.global_stores, hi.global_stores),
        ("shared loads", lo.shared_loads, hi.shared_loads),
        ("shared stores", lo.shared_stores, hi.shared_stores),
        ("atomics", lo.atomics, hi.atomics),
        ("barriers", lo.barriers, hi.barriers),
    ] {
        t += &format!("  {name:<16}{a:>10}{b:>12}\n");
    }
    if !c.buffers.is_empty() {
        t += &format!("  {:<16}{:>21}{:>23}{:>10}\n", "per buffer", "loads: req / sectors", "stores: req / sectors", "atomics");
        for b in &c.buffers {
            let l = format!("{} / {}", b.loads.requests, b.loads.sectors);
            let s = format!("{} / {}", b.stores.requests, b.stores.sectors);
            t += &format!("  {:<16}{l:>21}{s:>23}{:>10}\n", b.label, b.atomics);
        }
    }
    t
}

/// `--map`: which elements of each buffer the run wrote, as the emulator's memory shows it after
/// the launches (an uninit buffer starts as 0xFF poison, the others as their init), with the
/// access counts check mode made for each buffer and, where check mode recorded them, the
/// thread that wrote each element last (`writers`: per cell, its first element with a writer).
mod touch_map {
    use gpubook::gpu::AccessCounts;
    use gpubook_labs::launch_spec::{LaunchLine, Session};
    use serde_json::{Value, json};

    /// At most this many cells a buffer: a cell stands for several elements beyond it.
    const CELLS: usize = 200;

    /// (launch index, global linear thread id).
    type Writer = (usize, u64);

    #[derive(Default)]
    pub struct TouchMap {
        launches: Vec<Value>,
        /// (buffer label, loads [requests, sectors], stores [requests, sectors], atomics) summed
        /// over the launches.
        traffic: Vec<(String, [u64; 2], [u64; 2], u64)>,
        /// Per buffer label, per element, its last writer over all launches.
        who: Vec<(String, Vec<Option<Writer>>)>,
        /// Why some launch recorded no writers.
        unknown: Option<String>,
        /// Each launch's grid and block, to turn linear ids into coordinates.
        shapes: Vec<([u32; 3], [u32; 3])>,
        /// Each launch's rank, with several ranks.
        ranks: Vec<Option<usize>>,
    }

    impl TouchMap {
        /// A launch of `line` (on `rank`, with several ranks).
        pub fn launched(&mut self, line: &LaunchLine, rank: Option<usize>, counts: Option<&AccessCounts>, ok: bool) {
            let mut launch = json!({
                "kernel": line.kernel, "grid": [line.grid.0, line.grid.1, line.grid.2],
                "block": [line.block.0, line.block.1, line.block.2], "ok": ok,
                "threads": counts.map(|c| c.threads),
            });
            if let Some(r) = rank {
                launch["rank"] = json!(r);
            }
            self.launches.push(launch);
            let index = self.shapes.len();
            self.shapes.push(([line.grid.0, line.grid.1, line.grid.2], [line.block.0, line.block.1, line.block.2]));
            self.ranks.push(rank);
            for b in counts.map(|c| c.buffers.as_slice()).unwrap_or_default() {
                if let Some(w) = &b.writers {
                    let at = match self.who.iter().position(|t| t.0 == b.label) {
                        Some(at) => at,
                        None => {
                            self.who.push((b.label.clone(), Vec::new()));
                            self.who.len() - 1
                        }
                    };
                    let elems = &mut self.who[at].1;
                    elems.resize(elems.len().max(w.thread_plus_one.len()), None);
                    for (i, e) in elems.iter_mut().enumerate() {
                        if let Some(id) = w.writer(i) {
                            *e = Some((index, id));
                        }
                    }
                }
                let at = match self.traffic.iter().position(|t| t.0 == b.label) {
                    Some(at) => at,
                    None => {
                        self.traffic.push((b.label.clone(), [0; 2], [0; 2], 0));
                        self.traffic.len() - 1
                    }
                };
                let t = &mut self.traffic[at];
                t.1[0] += b.loads.requests;
                t.1[1] += b.loads.sectors;
                t.2[0] += b.stores.requests;
                t.2[1] += b.stores.sectors;
                t.3 += b.atomics;
            }
        }

        /// A launch ran but recorded no writers, for this reason.
        pub fn writers_unknown(&mut self, why: &str) {
            self.unknown.get_or_insert_with(|| why.to_string());
        }

        /// `block 3, thread 17`, or coordinates (`block (1,2), thread (3,0)`) when the launch's
        /// grid or block has more than one dimension.
        fn describe(&self, launch: usize, id: u64) -> String {
            let (grid, block) = self.shapes[launch];
            let per_block: u64 = block.iter().map(|&d| u64::from(d)).product();
            let coords = |linear: u64, dims: [u32; 3]| {
                let (x, y) = (u64::from(dims[0]), u64::from(dims[1]));
                match dims {
                    [_, 1, 1] => linear.to_string(),
                    [_, _, 1] => format!("({},{})", linear % x, linear / x),
                    _ => format!("({},{},{})", linear % x, linear / x % y, linear / (x * y)),
                }
            };
            let (b, t) = (id / per_block.max(1), id % per_block.max(1));
            let which = match self.ranks[launch] {
                // Rank r's k-th launch.
                Some(r) => format!("rank {r}'s launch {}, ", self.ranks[..=launch].iter().filter(|&&x| x == Some(r)).count()),
                None if self.shapes.len() > 1 => format!("launch {}, ", launch + 1),
                None => String::new(),
            };
            format!("{which}block {}, thread {}", coords(b, grid), coords(t, block))
        }

        /// `--writers N`: the first `n` elements' writers of each buffer, one a line.
        pub fn writers_text(&self, n: usize) -> String {
            let mut t = String::from("who wrote each element (the last write wins; ids within the grid and the block):\n");
            if let Some(why) = &self.unknown {
                t += &format!("  unknown: {why}\n");
            }
            for (label, elems) in &self.who {
                for (i, e) in elems.iter().enumerate().take(n) {
                    let who = e.map_or_else(|| "not written".to_string(), |(l, id)| self.describe(l, id));
                    t += &format!("  {label}[{i}]: {who}\n");
                }
                if elems.len() > n {
                    t += &format!("  ... {} more elements of {label}\n", elems.len() - n);
                }
            }
            if self.who.is_empty() && self.unknown.is_none() {
                t += "  no launch wrote to a buffer\n";
            }
            t
        }

        /// The map's `writers` of one buffer: per cell, its first element that has a writer.
        fn cells(&self, name: &str, n: usize, per: usize) -> Value {
            let Some((_, elems)) = self.who.iter().find(|w| w.0 == name) else {
                return Value::Null;
            };
            let cells: Vec<Value> = (0..n.div_ceil(per))
                .map(|c| {
                    let first = (c * per..((c + 1) * per).min(n)).find_map(|i| elems.get(i).copied().flatten().map(|w| (i, w)));
                    match first {
                        Some((i, (l, id))) => {
                            let per_block: u64 = self.shapes[l].1.iter().map(|&d| u64::from(d)).product();
                            json!({ "i": i, "launch": l, "block": id / per_block, "thread": id % per_block, "who": self.describe(l, id) })
                        }
                        None => Value::Null,
                    }
                })
                .collect();
            Value::Array(cells)
        }

        /// One entry per buffer; with several ranks, one per buffer and rank (rank 0's buffers
        /// first), each with its `rank`, and the number of `ranks` beside them.
        pub fn finish(&self, session: &Session, backend: &str) -> anyhow::Result<Value> {
            let mut buffers = Vec::new();
            let ranks = session.ranks();
            for (rank, b) in (0..ranks).flat_map(|r| session.buffers().iter().map(move |b| (r, b))) {
                let after = session.read_rank(b, rank)?;
                let size = b.ty.size().max(1);
                let initial = b.initial();
                // Per element: 0 unchanged, 1 written (changed, or poison replaced), 2 never written.
                let states: Vec<u8> = after
                    .chunks_exact(size)
                    .enumerate()
                    .map(|(i, e)| match initial {
                        Some(first) => u8::from(first.get(i * size..(i + 1) * size) != Some(e)),
                        None if e.iter().all(|&x| x == 0xFF) => 2,
                        None => 1,
                    })
                    .collect();
                let per = states.len().div_ceil(CELLS).max(1);
                let share = |cell: &[u8], s: u8| (100.0 * cell.iter().filter(|&&x| x == s).count() as f64 / cell.len() as f64).round();
                let label = session.label(b, rank);
                let traffic = self.traffic.iter().find(|t| t.0 == label);
                let mut entry = json!({
                    "name": b.name, "type": b.ty.c_name(), "n": b.n, "per_cell": per,
                    "poisoned": initial.is_none(),
                    "written": states.chunks(per).map(|c| share(c, 1)).collect::<Vec<_>>(),
                    "unwritten": states.chunks(per).map(|c| share(c, 2)).collect::<Vec<_>>(),
                    "written_total": states.iter().filter(|&&x| x == 1).count(),
                    "unwritten_total": states.iter().filter(|&&x| x == 2).count(),
                    "loads": traffic.map(|t| t.1), "stores": traffic.map(|t| t.2), "atomics": traffic.map(|t| t.3),
                    "writers": self.cells(&label, states.len(), per),
                });
                if ranks > 1 {
                    entry["rank"] = json!(rank);
                }
                buffers.push(entry);
            }
            let writers = json!({ "known": self.unknown.is_none(), "why": self.unknown });
            let mut map = json!({ "backend": backend, "launches": self.launches, "buffers": buffers, "writers": writers });
            if ranks > 1 {
                map["ranks"] = json!(ranks);
            }
            Ok(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_name_a_buffer_and_a_file() {
        assert_eq!(parse_save("out=o.npy").unwrap(), ("out".to_string(), PathBuf::from("o.npy")));
        assert!(parse_save("out").is_err());
    }

    #[test]
    fn a_summary_counts_the_nans_it_leaves_out() {
        let f32s = |xs: &[f32]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let ty = ElemType::parse("f32").unwrap();
        let s = summary(ty, &f32s(&[1.0, f32::NAN, 3.0]), 3, false);
        assert!(s.ends_with("min 1, max 3, sum 4; 1 NaN (not in min, max and sum)"), "{s}");
        assert!(!summary(ty, &f32s(&[1.0, 3.0]), 2, false).contains("NaN"));
        // An uninit buffer's never-written elements are poison, not NaNs.
        let s = summary(ty, &f32s(&[1.0, f32::from_bits(u32::MAX)]), 2, true);
        assert!(s.ends_with("min 1, max 1, sum 1; 1 still hold the 0xFF poison (never written?)"), "{s}");
    }

    #[test]
    fn a_summary_names_the_pattern_of_a_local_never_set() {
        let f32s = |xs: &[f32]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let ty = ElemType::parse("f32").unwrap();
        let pattern = f32::from_bits(0xFEFE_FEFE);
        let s = summary(ty, &f32s(&[pattern + 4.0, 2.5]), 2, false);
        assert!(s.contains("min -1.6947395e38, max 2.5"), "{s}");
        assert_eq!((number(1e15), number(2.5e-7), number(1e14)), ("1e15".into(), "2.5e-7".into(), "100000000000000".into()));
        assert!(s.ends_with("; 1 near -1.7e38, check mode's pattern for a local variable that was never set"), "{s}");
        assert!(!summary(ty, &f32s(&[-1.0e38, 2.5]), 2, false).contains("pattern"));
    }
}
