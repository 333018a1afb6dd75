//! Chapters 5 and 6 measured side by side in one run: strided against coalesced, a shared tile
//! with bank conflicts against a padded one, histograms with and without privatisation (on
//! spread and on repeated values), and three multi-block scans, each in GB/s and as a fraction
//! of the device-to-device copy measured in the same run. `gpubook perf-bench`, the book's
//! tables and the roofline read these numbers.
//!
//! Bandwidth counts the bytes the work must move (a scan reads n values and writes n), not the
//! bytes a variant happens to move: a variant that moves more is slower, and its GB/s say so.
//! On a GPU the times come from CUDA events; on the emulator from its cost model, which charges
//! every byte of a kernel's buffers once and so cannot tell these variants apart. The emulator's
//! check mode counts what each variant asked of the memory system instead ([`Counted`]).

use gpubook::gpu::{AccessCounts, BackendKind, DeviceSlice, Function, Gpu, LaunchConfig, Result, Source, Stream};
use std::fmt::Write;

/// How big and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchConfig {
    /// Elements (f32 or u32) of each array.
    pub elements: usize,
    /// Timed runs per row; the median is reported.
    pub reps: usize,
}

impl BenchConfig {
    /// 2^26 elements (256 MiB an array), 20 runs on a GPU; 2^16, one run on the emulator, whose
    /// times come from a model and whose check mode counts every access.
    pub fn for_device(gpu: &Gpu) -> BenchConfig {
        match gpu.backend() {
            BackendKind::Cuda => BenchConfig { elements: 1 << 26, reps: 20 },
            BackendKind::Emulator => BenchConfig { elements: 1 << 16, reps: 1 },
        }
    }
}

/// What the emulator's check mode counted for one run of a variant (all its launches).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counted {
    /// Bytes used per byte moved in 32-byte sectors, loads and stores together (1.0: every byte
    /// of every sector used).
    pub efficiency: f64,
    /// Sectors per warp-level request, loads and stores together.
    pub sectors_per_request: f64,
    /// Bytes moved in sectors: what DRAM would move with no cache.
    pub sector_bytes: u64,
    /// Extra passes through the shared-memory banks, per shared request.
    pub conflicts_per_request: f64,
    pub global_atomics: u64,
    pub shared_atomics: u64,
}

impl Counted {
    /// The counts of a run's launches added up; `None` when any launch was not counted (a GPU,
    /// or the emulator's fast mode).
    pub fn of<'a>(launches: impl IntoIterator<Item = Option<&'a AccessCounts>>) -> Option<Counted> {
        let (mut unique, mut sectors, mut requests) = (0u64, 0u64, 0u64);
        let (mut shared_requests, mut conflicts, mut global_atomics, mut shared_atomics) = (0u64, 0u64, 0u64, 0u64);
        for c in launches {
            let c = c?;
            for g in [c.global.loads, c.global.stores] {
                unique += g.unique_bytes;
                sectors += g.sectors;
                requests += g.requests;
            }
            for s in [c.shared.loads, c.shared.stores] {
                shared_requests += s.requests;
                conflicts += s.bank_conflicts();
            }
            global_atomics += c.global.atomics;
            shared_atomics += c.shared.atomics;
        }
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Some(Counted {
            efficiency: ratio(unique, sectors * 32),
            sectors_per_request: ratio(sectors, requests),
            sector_bytes: sectors * 32,
            conflicts_per_request: ratio(conflicts, shared_requests),
            global_atomics,
            shared_atomics,
        })
    }
}

/// One measured variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the rows of a section have in common ("coalescing", "scan", ...).
    pub section: &'static str,
    pub name: &'static str,
    /// Bytes the work must read and write.
    pub bytes: f64,
    /// Median milliseconds.
    pub ms: f64,
    pub counted: Option<Counted>,
}

impl Row {
    pub fn gb_per_s(&self) -> f64 {
        if self.ms > 0.0 { self.bytes / self.ms / 1e6 } else { 0.0 }
    }
}

/// A whole run: the copy, then every variant.
#[derive(Debug, Clone)]
pub struct PerfRun {
    pub device: String,
    pub backend: BackendKind,
    pub config: BenchConfig,
    pub copy: Row,
    pub rows: Vec<Row>,
}

impl PerfRun {
    /// A row's bandwidth as a fraction of the copy's.
    pub fn of_copy(&self, row: &Row) -> f64 {
        row.gb_per_s() / self.copy.gb_per_s().max(1e-12)
    }

    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The same run with only the rows of `sections` (the copy always stays: it is the 100%).
    pub fn only(&self, sections: &[&str]) -> PerfRun {
        PerfRun { rows: self.rows.iter().filter(|r| sections.contains(&r.section)).cloned().collect(), ..self.clone() }
    }

    /// The goal the chapter sets: the single-pass scan at 70% of the copy or more.
    pub fn scan_goal(&self) -> Option<(f64, bool)> {
        let f = self.of_copy(self.row(SCAN_DECOUPLED)?);
        Some((f, f >= 0.7))
    }
}

/// The names of the rows, as the tables and the book print them.
pub const GATHER_THREAD: &str = "gather rows, a thread a row";
pub const GATHER_WARP: &str = "gather rows, a warp a row";
pub const TILE_CONFLICTS: &str = "row sums, tile[32][32]";
pub const TILE_PADDED: &str = "row sums, tile[32][33]";
pub const HIST_GLOBAL: &str = "global atomics, spread values";
pub const HIST_SHARED: &str = "privatised, spread values";
pub const HIST_GLOBAL_ONE: &str = "global atomics, one value";
pub const HIST_SHARED_ONE: &str = "privatised, one value";
pub const SCAN_THEN_ADD: &str = "scan, then add (3 kernels)";
pub const REDUCE_THEN_SCAN: &str = "reduce, then scan";
pub const SCAN_DECOUPLED: &str = "1 pass, decoupled look-back";

/// Elements of a scan tile and threads of a tile's block (kernels/perf/scan.cu's TILE, THREADS).
const SCAN_TILE: usize = 8192;
const SCAN_THREADS: u32 = 128;
/// Floats in a gathered row, and columns of the row-sums matrix.
const ROW: usize = 1024;
const BINS: usize = 256;
const BLOCK: u32 = 256;

/// Runs everything on `gpu` and checks every result against the host.
pub fn run(gpu: &Gpu, config: BenchConfig) -> Result<PerfRun> {
    let n = config.elements.max(SCAN_TILE).next_multiple_of(ROW);
    let bench = Bench::new(gpu, config)?;
    let copy = bench.copy(n)?;
    let mut rows = Vec::new();
    rows.extend(bench.coalescing(n)?);
    rows.extend(bench.banks(n)?);
    rows.extend(bench.histograms(n)?);
    rows.extend(bench.scans(n)?);
    Ok(PerfRun { device: gpu.info().name.clone(), backend: gpu.backend(), config: BenchConfig { elements: n, ..config }, copy, rows })
}

/// The device, its stream and how to time a variant.
pub(crate) struct Bench<'g> {
    pub gpu: &'g Gpu,
    pub stream: std::sync::Arc<Stream>,
    pub reps: usize,
    warmups: usize,
    /// Counting needs the trace (the emulator); timing on a GPU runs without it.
    counting: bool,
    /// The device is shared (the book's figures): its tracing goes back as it was.
    was_tracing: bool,
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        self.gpu.set_tracing(self.was_tracing);
    }
}

impl<'g> Bench<'g> {
    pub fn new(gpu: &'g Gpu, config: BenchConfig) -> Result<Bench<'g>> {
        let counting = gpu.backend() == BackendKind::Emulator;
        let was_tracing = gpu.tracing();
        gpu.set_tracing(counting);
        let warmups = if counting { 0 } else { 3 };
        Ok(Bench { gpu, stream: gpu.default_stream(), reps: config.reps.max(1), warmups, counting, was_tracing })
    }

    /// Median milliseconds of `f` (between two events on the stream), and on the emulator what
    /// its last run's launches counted.
    pub fn time(&self, mut f: impl FnMut() -> Result<()>) -> Result<(f64, Option<Counted>)> {
        for _ in 0..self.warmups {
            f()?;
        }
        let mut ms = Vec::with_capacity(self.reps);
        let mut counted = None;
        for rep in 0..self.reps {
            let last = rep + 1 == self.reps;
            if last && self.counting {
                self.gpu.clear_trace()?;
            }
            let start = self.stream.record_event()?;
            f()?;
            let end = self.stream.record_event()?;
            ms.push(start.elapsed_ms(&end)? as f64);
            if last && self.counting {
                let trace = self.gpu.trace()?;
                counted = Counted::of(trace.launches().map(|op| op.access_counts()));
                self.gpu.clear_trace()?;
            }
        }
        ms.sort_by(f64::total_cmp);
        Ok((ms[ms.len() / 2], counted))
    }

    fn row(&self, section: &'static str, name: &'static str, bytes: usize, f: impl FnMut() -> Result<()>) -> Result<Row> {
        let (ms, counted) = self.time(f)?;
        Ok(Row { section, name, bytes: bytes as f64, ms, counted })
    }

    fn function(&self, file: &str, name: &str) -> Result<Function> {
        self.gpu.load_module(Source::library(&format!("perf/{file}")))?.load_function(name)
    }

    /// Blocks of `BLOCK` threads that fill the device a few times over (grid-stride kernels).
    fn grid_for_device(&self) -> u32 {
        self.gpu.info().multiprocessors.max(1) * 8
    }

    /// The ceiling: `cuMemcpyDtoD` of n floats (n read, n written).
    fn copy(&self, n: usize) -> Result<Row> {
        let src = self.stream.clone_htod(&ramp(n))?;
        let mut dst = self.stream.alloc_zeros::<u32>(n)?;
        let row = self.row("copy", "copy DtoD (the ceiling)", 8 * n, || self.stream.memcpy_dtod(&src, &mut dst))?;
        expect(self.stream.clone_dtoh(&dst)? == ramp(n), "the copy")?;
        Ok(row)
    }

    /// A gather of n / ROW rows of ROW floats, one thread a row and one warp a row.
    fn coalescing(&self, n: usize) -> Result<Vec<Row>> {
        let rows = n / ROW;
        let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let index: Vec<i32> = (0..rows).map(|r| ((r * 7919 + 13) % rows) as i32).collect();
        let in_d = self.stream.clone_htod(&input)?;
        let index_d = self.stream.clone_htod(&index)?;
        let mut out = self.stream.alloc_zeros::<f32>(n)?;
        let (rows_i, row_i) = (rows as i32, ROW as i32);
        let bytes = 8 * n + 4 * rows;
        let mut result = Vec::new();
        for (name, kernel, threads) in [(GATHER_THREAD, "gather_rows_thread", rows), (GATHER_WARP, "gather_rows_warp", 32 * rows)] {
            let f = self.function("memory.cu", kernel)?;
            let cfg = cover(threads);
            self.stream.memset_zeros(&mut out)?;
            result.push(self.row("coalescing", name, bytes, || {
                let mut l = self.stream.launch_builder(&f);
                l.arg(&in_d).arg(&index_d).arg(&mut out).arg(&rows_i).arg(&row_i);
                // SAFETY: in_d and out hold rows × ROW floats, index `rows` in-range row numbers, and
                // each kernel's r < rows guard stops the threads past the last row.
                unsafe { l.launch(cfg) }
            })?);
            let got = self.stream.clone_dtoh(&out)?;
            let ok = (0..rows).all(|r| {
                let src = index[r] as usize * ROW;
                got[r * ROW..(r + 1) * ROW] == input[src..src + ROW]
            });
            expect(ok, name)?;
        }
        Ok(result)
    }

    /// Row sums of an (n / ROW) × ROW matrix through a 32 × 32 shared tile, unpadded and padded.
    fn banks(&self, n: usize) -> Result<Vec<Row>> {
        let (rows, cols) = (n / ROW, ROW);
        let m: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let m_d = self.stream.clone_htod(&m)?;
        let mut sums = self.stream.alloc_zeros::<f32>(rows)?;
        let want: Vec<f32> = m.chunks(cols).map(|r| r.iter().sum()).collect();
        let (rows_i, cols_i) = (rows as i32, cols as i32);
        let cfg = LaunchConfig { grid_dim: (rows.div_ceil(32) as u32, 1, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
        let mut result = Vec::new();
        for (name, kernel) in [(TILE_CONFLICTS, "row_sums_conflicts"), (TILE_PADDED, "row_sums_padded")] {
            let f = self.function("memory.cu", kernel)?;
            result.push(self.row("banks", name, 4 * (n + rows), || {
                let mut l = self.stream.launch_builder(&f);
                l.arg(&m_d).arg(&mut sums).arg(&rows_i).arg(&cols_i);
                // SAFETY: m_d holds rows × cols floats and sums `rows`; the kernel guards every load
                // (row < rows && col < cols) and every store (row < rows).
                unsafe { l.launch(cfg) }
            })?);
            // Small integers: every partial sum is exact in f32.
            expect(self.stream.clone_dtoh(&sums)? == want, name)?;
        }
        Ok(result)
    }

    /// 256-bin histograms of n values spread over the bins, and of n copies of one value.
    fn histograms(&self, n: usize) -> Result<Vec<Row>> {
        let global = self.function("histogram.cu", "histogram_global")?;
        let shared = self.function("histogram.cu", "histogram_shared")?;
        let grid = self.grid_for_device();
        let cfg = |shared_mem_bytes| LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes };
        let (n_i, n4, bins_i) = (n as i32, (n / 4) as i32, BINS as i32);
        let mut result = Vec::new();
        for (names, values) in [([HIST_GLOBAL, HIST_SHARED], spread_values(n)), ([HIST_GLOBAL_ONE, HIST_SHARED_ONE], vec![7u32; n])] {
            let values_d = self.stream.clone_htod(&values)?;
            let mut counts = self.stream.alloc_zeros::<u32>(BINS)?;
            let mut want = vec![0u32; BINS];
            for &v in &values {
                want[v as usize] += 1;
            }
            for (name, f, smem) in [(names[0], &global, 0), (names[1], &shared, 4 * BINS as u32)] {
                result.push(self.row("histogram", name, 4 * n, || {
                    self.stream.memset_zeros(&mut counts)?;
                    let mut l = self.stream.launch_builder(f);
                    if smem == 0 {
                        l.arg(&values_d).arg(&mut counts).arg(&n_i);
                    } else {
                        l.arg(&values_d).arg(&mut counts).arg(&n4).arg(&bins_i);
                    }
                    // SAFETY: every value is below BINS and counts holds BINS words, as does the shared
                    // copy; the grid-stride loops stop at n (n / 4 uint4s).
                    unsafe { l.launch(cfg(smem)) }
                })?);
                expect(self.stream.clone_dtoh(&counts)? == want, name)?;
            }
        }
        Ok(result)
    }

    /// Inclusive scans of n u32 values, three ways (kernels/perf/scan.cu says how each works).
    fn scans(&self, n: usize) -> Result<Vec<Row>> {
        let x: Vec<u32> = (0..n).map(|i| (i % 5) as u32).collect();
        let want = inclusive_scan(&x);
        let x_d = self.stream.clone_htod(&x)?;
        let mut y = self.stream.alloc_zeros::<u32>(n)?;
        let n_i = n as i32;
        let tiles = n.div_ceil(SCAN_TILE);
        let tile_cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (SCAN_THREADS, 1, 1), shared_mem_bytes: 0 };
        let mut result = Vec::new();

        let scan_blocks = self.function("scan.cu", "scan_blocks")?;
        let add_offsets = self.function("scan.cu", "add_offsets")?;
        result.push(self.row("scan", SCAN_THEN_ADD, 8 * n, || scan_then_add(&self.stream, &scan_blocks, &add_offsets, &x_d, &mut y))?);
        expect(self.stream.clone_dtoh(&y)? == want, SCAN_THEN_ADD)?;

        let reduce = self.function("scan.cu", "reduce_tiles")?;
        let scan_sums = self.function("scan.cu", "scan_tile_sums")?;
        let scan_tiles = self.function("scan.cu", "scan_tiles")?;
        let mut sums = self.stream.alloc_zeros::<u32>(tiles)?;
        let tiles_i = tiles as i32;
        self.stream.memset_zeros(&mut y)?;
        result.push(self.row("scan", REDUCE_THEN_SCAN, 8 * n, || {
            let mut l = self.stream.launch_builder(&reduce);
            l.arg(&x_d).arg(&mut sums).arg(&n_i);
            // SAFETY: x_d holds n values read in `tiles` tiles with bounds checks, and sums one word
            // per tile.
            unsafe { l.launch(tile_cfg) }?;
            let mut l = self.stream.launch_builder(&scan_sums);
            l.arg(&mut sums).arg(&tiles_i);
            // SAFETY: sums holds `tiles` words and the one block's loop stops at tiles.
            unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }) }?;
            let mut l = self.stream.launch_builder(&scan_tiles);
            l.arg(&x_d).arg(&mut y).arg(&sums).arg(&n_i);
            // SAFETY: x_d and y hold n values, touched with bounds checks, and sums one offset per
            // tile.
            unsafe { l.launch(tile_cfg) }
        })?);
        expect(self.stream.clone_dtoh(&y)? == want, REDUCE_THEN_SCAN)?;

        let decoupled = self.function("scan.cu", "scan_decoupled")?;
        let mut status = self.stream.alloc_zeros::<u64>(tiles + 1)?; // a word per tile, then the ticket
        self.stream.memset_zeros(&mut y)?;
        result.push(self.row("scan", SCAN_DECOUPLED, 8 * n, || {
            self.stream.memset_zeros(&mut status)?;
            let mut l = self.stream.launch_builder(&decoupled);
            l.arg(&x_d).arg(&mut y).arg(&mut status).arg(&n_i);
            // SAFETY: x_d and y hold n values, touched with bounds checks, and status one zeroed
            // word per tile plus the ticket.
            unsafe { l.launch(tile_cfg) }
        })?);
        expect(self.stream.clone_dtoh(&y)? == want, SCAN_DECOUPLED)?;
        Ok(result)
    }
}

/// The exercise's multi-block scan: scan blocks of 256 (writing their totals), scan the totals
/// the same way, add each block's offset. Recursive: 2^26 values take four levels.
fn scan_then_add(stream: &Stream, scan: &Function, add: &Function, x: &DeviceSlice<u32>, y: &mut DeviceSlice<u32>) -> Result<()> {
    let n = x.len();
    let blocks = n.div_ceil(BLOCK as usize);
    // SAFETY: scan_blocks writes every block's total before anything reads it.
    let mut sums = unsafe { stream.alloc::<u32>(blocks) }?;
    let n_i = n as i32;
    let mut l = stream.launch_builder(scan);
    l.arg(x).arg(&mut *y).arg(&mut sums).arg(&n_i);
    // SAFETY: x and y hold n values and sums one total per 256-thread block; the kernel's
    // i < n guard stops the last block.
    unsafe { l.launch(cover(n)) }?;
    if blocks > 1 {
        // SAFETY: the recursive call writes every element.
        let mut scanned = unsafe { stream.alloc::<u32>(blocks) }?;
        scan_then_add(stream, scan, add, &sums, &mut scanned)?;
        let mut l = stream.launch_builder(add);
        l.arg(&mut *y).arg(&scanned).arg(&n_i);
        // SAFETY: y holds n values and scanned one offset per block; add_offsets guards i < n.
        unsafe { l.launch(cover(n)) }?;
    }
    Ok(())
}

/// The host's inclusive scan (wrapping), to check the device's.
pub(crate) fn inclusive_scan(x: &[u32]) -> Vec<u32> {
    let mut sum = 0u32;
    x.iter()
        .map(|&v| {
            sum = sum.wrapping_add(v);
            sum
        })
        .collect()
}

/// One thread per item, blocks of `BLOCK`.
fn cover(threads: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (threads.div_ceil(BLOCK as usize).max(1) as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

fn ramp(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// Values spread over the bins (a multiplicative hash of the index, so every bin gets its share
/// and neighbours differ).
fn spread_values(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) % BINS as u32).collect()
}

fn expect(ok: bool, what: &str) -> Result<()> {
    if ok { Ok(()) } else { Err(gpubook::gpu::GpuError::Driver { call: "perf-bench", message: format!("{what} gave a wrong result") }) }
}

/// The run as one table (88 columns at most): GB/s and the fraction of the copy, and on the
/// emulator what each variant asked of memory.
pub fn table(run: &PerfRun) -> String {
    let mut t = String::new();
    let mib = (run.config.elements * 4) >> 20;
    let _ = writeln!(
        t,
        "gpubook perf-bench on {} ({}), {} elements ({mib} MiB an array), median of {}",
        run.device,
        run.backend,
        run.config.elements,
        count_runs(run.config.reps)
    );
    if run.backend == BackendKind::Emulator {
        let _ = writeln!(t, "(emulator: times from its cost model, which cannot tell these variants apart; the");
        let _ = writeln!(t, " counts from its check mode can: sectors/request, efficiency, conflicts, atomics)");
    }
    let counts = run.rows.iter().any(|r| r.counted.is_some());
    let _ = write!(t, "\n{:<11} {:<30} {:>9} {:>8} {:>7}", "", "variant", "ms", "GB/s", "of copy");
    if counts {
        let _ = write!(t, " {:>5} {:>5} {:>5}", "sect", "eff", "confl");
    }
    t.push('\n');
    let mut last = "";
    for r in std::iter::once(&run.copy).chain(&run.rows) {
        let section = if r.section == last { "" } else { r.section };
        last = r.section;
        let _ = write!(t, "{section:<11} {:<30} {:>9.4} {:>8.1} {:>6.1}%", r.name, r.ms, r.gb_per_s(), 100.0 * run.of_copy(r));
        if let Some(c) = r.counted {
            let _ = write!(t, " {:>5.1} {:>4.0}% {:>5.1}", c.sectors_per_request, 100.0 * c.efficiency, c.conflicts_per_request);
        }
        t.push('\n');
    }
    if counts {
        let _ = writeln!(t, "\nsect: 32-byte sectors per warp request; eff: bytes used of the bytes moved in sectors;");
        let _ = writeln!(t, "confl: extra passes through the banks per shared request. Atomics (global / shared):");
        for r in run.rows.iter().filter(|r| r.section == "histogram") {
            if let Some(c) = r.counted {
                let _ = writeln!(t, "  {:<40} {:>10} / {}", r.name, c.global_atomics, c.shared_atomics);
            }
        }
    }
    if let Some((f, met)) = run.scan_goal() {
        let verdict = if met { "met" } else { "not met" };
        let _ = writeln!(t, "\ngoal: the 1-pass scan at >= 70% of the copy: {verdict} ({:.0}%)", 100.0 * f);
    }
    t
}

fn count_runs(n: usize) -> String {
    if n == 1 { "1 run".into() } else { format!("{n} runs") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The book's figures share one device: a bench that turned its trace off and left it so
    /// made the chunk-pair recordings read zeros on the H200.
    #[test]
    fn a_bench_gives_the_devices_tracing_back() {
        let Some(gpu) = gpubook::testing::device_or_skip("a_bench_gives_the_devices_tracing_back") else { return };
        for before in [true, false] {
            gpu.set_tracing(before);
            let bench = Bench::new(&gpu, BenchConfig { elements: 1024, reps: 1 }).unwrap();
            assert_eq!(gpu.tracing(), bench.counting);
            drop(bench);
            assert_eq!(gpu.tracing(), before);
        }
    }
}
