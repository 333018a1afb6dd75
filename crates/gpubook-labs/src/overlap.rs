//! Copy/compute overlap, measured. The chunked pipelines of chapters 7 and 8 run here on any
//! device (serial, ping-pong on two streams, three streams with events), and the trace says how
//! much of the copying they hid. `gpubook streams-bench`, the chapters' figures and the ping-pong
//! grader all read these numbers, so they agree.

use gpubook::gpu::{BackendKind, CopyDir, Event, Gpu, GpuError, LaunchConfig, OpKind, Result, Source, Stream, Trace, TraceOp};
use std::fmt::Write;
use std::sync::Arc;

/// How much copy time ran while another engine was busy too.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hidden {
    /// Time the copy engines were busy: host→device plus device→host, each counted once where
    /// copies of one direction overlap.
    pub copy_us: f64,
    /// Of that, time during which the other copy direction or a kernel ran as well.
    pub hidden_us: f64,
}

impl Hidden {
    /// `hidden_us / copy_us`, 1.0 for no copies.
    pub fn fraction(&self) -> f64 {
        if self.copy_us > 0.0 { self.hidden_us / self.copy_us } else { 1.0 }
    }
}

fn is_dir(d: CopyDir) -> impl Fn(&TraceOp) -> bool {
    move |o| matches!(o.kind, OpKind::Copy { dir, .. } if dir == d)
}

fn is_compute(o: &TraceOp) -> bool {
    matches!(o.kind, OpKind::Launch { .. } | OpKind::Memset { .. } | OpKind::Copy { dir: CopyDir::DeviceToDevice, .. })
}

/// Copy time hidden behind other work: a copy costs no wall-clock time of its own while another
/// engine (the other direction's copy engine, or the compute engine) is busy at the same time.
pub fn copy_hidden(trace: &Trace) -> Hidden {
    copy_hidden_by(trace, is_dir(CopyDir::HostToDevice), is_dir(CopyDir::DeviceToHost), is_compute)
}

/// [`copy_hidden`] over chosen operations: the time `up` copies ran beside `down` copies or
/// `compute` work, and the other way round. A grader passes a pipeline's own copies and kernels,
/// so that work on the side (a kernel on another stream, say) hides nothing.
pub fn copy_hidden_by(
    trace: &Trace,
    up: impl Fn(&TraceOp) -> bool,
    down: impl Fn(&TraceOp) -> bool,
    compute: impl Fn(&TraceOp) -> bool,
) -> Hidden {
    let copy_us = trace.busy_us(&up) + trace.busy_us(&down);
    let hidden_us = trace.overlap_us(&up, |o| down(o) || compute(o)) + trace.overlap_us(&down, |o| up(o) || compute(o));
    Hidden { copy_us, hidden_us }
}

/// Total time each engine worked, summed over operations (from a run where nothing overlaps,
/// these are the lower bound of any pipeline of the same work).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Engines {
    pub h2d_us: f64,
    pub d2h_us: f64,
    pub compute_us: f64,
}

impl Engines {
    pub fn of(trace: &Trace) -> Engines {
        let sum = |pick: &dyn Fn(&TraceOp) -> bool| -> f64 { trace.ops.iter().filter(|o| pick(o)).map(TraceOp::duration_us).sum() };
        Engines { h2d_us: sum(&is_dir(CopyDir::HostToDevice)), d2h_us: sum(&is_dir(CopyDir::DeviceToHost)), compute_us: sum(&is_compute) }
    }
    /// No pipeline beats its busiest engine.
    pub fn bound_us(&self) -> f64 {
        self.h2d_us.max(self.d2h_us).max(self.compute_us)
    }
    pub fn total_us(&self) -> f64 {
        self.h2d_us + self.d2h_us + self.compute_us
    }
}

/// How a chunked copy-in, compute, copy-out job is spread over streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// One stream, one pair of buffers: every operation waits for the one before.
    Serial,
    /// Two streams, two pairs of buffers: chunk i on stream and pair i % 2 (chapter 8).
    PingPong,
    /// Three streams (uploads, kernels, downloads), two pairs of buffers, events between them.
    ThreeStreams,
}

impl Design {
    pub const ALL: [Design; 3] = [Design::Serial, Design::PingPong, Design::ThreeStreams];

    pub fn name(self) -> &'static str {
        match self {
            Design::Serial => "serial (1 stream, 1 buffer pair)",
            Design::PingPong => "ping-pong (2 streams, 2 pairs)",
            Design::ThreeStreams => "three streams (2 pairs, events)",
        }
    }

    /// The word a marker or a command line uses.
    pub fn key(self) -> &'static str {
        match self {
            Design::Serial => "serial",
            Design::PingPong => "ping-pong",
            Design::ThreeStreams => "three-streams",
        }
    }

    pub fn from_key(k: &str) -> Option<Design> {
        Design::ALL.into_iter().find(|d| d.key() == k)
    }
}

/// One run of a design.
#[derive(Debug, Clone)]
pub struct Run {
    pub design: Design,
    pub chunks: usize,
    pub chunk_elems: usize,
    /// Start to end, measured with events (on the emulator: its timeline model).
    pub elapsed_us: f64,
    /// Host time spent issuing the pipeline (wall clock; on the emulator it includes running
    /// the kernels, which the emulator does as they are issued).
    pub issue_us: f64,
    /// The pipeline's operations only (set-up left out).
    pub trace: Trace,
}

impl Run {
    pub fn hidden(&self) -> Hidden {
        copy_hidden(&self.trace)
    }

    /// The run as a figure's data: streams named as chapters 7 and 8 name them, and each copy
    /// and kernel labelled with its chunk (every design issues each kind of step in chunk order).
    pub fn timeline(&self, title: &str) -> crate::viz::Timeline {
        let mut streams: Vec<u32> = self.trace.ops.iter().map(|o| o.stream).filter(|s| *s != 0).collect();
        streams.sort_unstable();
        streams.dedup();
        let names: &[&str] = match self.design {
            Design::Serial => &["the stream"],
            Design::PingPong => &["stream 0 (even chunks)", "stream 1 (odd chunks)"],
            Design::ThreeStreams => &["up (copies in)", "work (kernels)", "down (copies out)"],
        };
        let mut labels = crate::viz::Labels {
            streams: streams.iter().zip(names).map(|(&s, n)| ((0, s), n.to_string())).collect(),
            ..Default::default()
        };
        let (mut ins, mut kernels, mut outs) = (0, 0, 0);
        for o in &self.trace.ops {
            let (word, count) = match o.kind {
                OpKind::Copy { dir: CopyDir::HostToDevice, .. } => ("in", &mut ins),
                OpKind::Copy { dir: CopyDir::DeviceToHost, .. } => ("out", &mut outs),
                OpKind::Launch { .. } => ("kernel", &mut kernels),
                _ => continue,
            };
            labels.ops.insert(o.index, (format!("{word} {count}"), vec![count.to_string()]));
            *count += 1;
        }
        crate::viz::Timeline::from_trace(&self.trace, title, &labels)
    }
}

/// The pipelines' kernel: y = x * A + B.
const A: f32 = 2.0;
const B: f32 = 0.5;

/// Streams `chunks` chunks of `chunk_elems` floats through the device in `design`'s way and
/// checks the result. Automatic synchronisation is off while it runs: the events are its own.
/// The ping-pong and three-stream designs are chapters 7 and 8's answers: graders refuse an
/// answer that calls this.
pub fn run(gpu: &Gpu, design: Design, chunks: usize, chunk_elems: usize) -> Result<Run> {
    gpubook::reference::called("gpubook_labs::overlap::run");
    let n = chunks * chunk_elems;
    let module = gpu.load_module(Source::library("bench/streams.cu"))?;
    let f = module.load_function("scale_shift")?;
    // SAFETY: filled right away, before any copy reads it.
    let mut input = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    for (i, v) in input.as_mut_slice()?.iter_mut().enumerate() {
        *v = (i % 1024) as f32;
    }
    // SAFETY: the downloads fill every chunk before the check reads it.
    let mut output = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    let stream_count = match design {
        Design::Serial => 1,
        Design::PingPong => 2,
        Design::ThreeStreams => 3,
    };
    let streams = (0..stream_count).map(|_| gpu.new_stream()).collect::<Result<Vec<_>>>()?;
    let pairs = if design == Design::Serial { 1 } else { 2 };
    // SAFETY: each chunk is uploaded (x) or computed (y) before it is read.
    let mut bufs = (0..pairs)
        .map(|p| unsafe {
            Ok((streams[p % stream_count].alloc::<f32>(chunk_elems)?, streams[p % stream_count].alloc::<f32>(chunk_elems)?))
        })
        .collect::<Result<Vec<_>>>()?;
    gpu.synchronize()?;
    gpu.clear_trace()?;
    let was_auto = gpu.auto_sync();
    gpu.set_auto_sync(false);
    let origin = gpu.default_stream();
    let start = origin.record_event()?;
    let host_clock = std::time::Instant::now();
    let issued = (|| {
        for s in &streams {
            s.wait(&start)?;
        }
        let cfg = LaunchConfig { grid_dim: ((chunk_elems as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut p = Pipe { f: &f, cfg, input: &input, chunk_elems };
        match design {
            Design::Serial | Design::PingPong => {
                for i in 0..chunks {
                    let s = &streams[i % stream_count];
                    let (x, y) = &mut bufs[i % pairs];
                    p.upload(s, i, x)?;
                    p.compute(s, x, y)?;
                    p.download(s, i, y, &mut output)?;
                }
            }
            Design::ThreeStreams => three_streams(&mut p, &streams, &mut bufs, &mut output, chunks)?,
        }
        for s in &streams {
            origin.join(s)?;
        }
        Ok::<_, GpuError>(())
    })();
    let issue_us = host_clock.elapsed().as_secs_f64() * 1e6;
    gpu.set_auto_sync(was_auto);
    issued?;
    let end = origin.record_event()?;
    let elapsed_us = start.elapsed_ms(&end)? as f64 * 1e3;
    let trace = gpu.trace()?;
    let out = output.as_slice()?;
    let inp = input.as_slice()?;
    if let Some(i) = (0..n).find(|&i| out[i] != inp[i] * A + B) {
        return Err(GpuError::Size(format!("{}: output[{i}] = {} but should be {}", design.name(), out[i], inp[i] * A + B)));
    }
    Ok(Run { design, chunks, chunk_elems, elapsed_us, trace, issue_us })
}

/// What one chunk's three steps need.
struct Pipe<'a> {
    f: &'a gpubook::gpu::Function,
    cfg: LaunchConfig,
    input: &'a gpubook::gpu::PinnedHostSlice<f32>,
    chunk_elems: usize,
}

type Buf = gpubook::gpu::DeviceSlice<f32>;

impl Pipe<'_> {
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        i * self.chunk_elems..(i + 1) * self.chunk_elems
    }
    fn upload(&mut self, s: &Stream, i: usize, x: &mut Buf) -> Result<()> {
        s.memcpy_htod(&self.input.slice(self.range(i)), x)
    }
    fn compute(&mut self, s: &Stream, x: &Buf, y: &mut Buf) -> Result<()> {
        let n = self.chunk_elems as i32;
        let mut l = s.launch_builder(self.f);
        l.arg(x).arg(y).arg(&A).arg(&B).arg(&n);
        // SAFETY: x and y hold chunk_elems floats and scale_shift's i < n guard keeps the
        // covering grid inside them.
        unsafe { l.launch(self.cfg) }
    }
    fn download(&mut self, s: &Stream, i: usize, y: &Buf, out: &mut gpubook::gpu::PinnedHostSlice<f32>) -> Result<()> {
        s.memcpy_dtoh(y, &mut out.slice_mut(self.range(i)))
    }
}

// ANCHOR: three_streams
/// Uploads on one stream, kernels on a second, downloads on a third; chunk i uses pair i % 2.
/// Four waits per chunk: the kernel after the upload (x ready) and after the download two
/// chunks back (y free); the download after the kernel; the upload after the kernel two chunks
/// back (x free).
fn three_streams(
    p: &mut Pipe<'_>,
    s: &[Arc<Stream>],
    bufs: &mut [(Buf, Buf)],
    out: &mut gpubook::gpu::PinnedHostSlice<f32>,
    chunks: usize,
) -> Result<()> {
    let (up, work, down) = (&s[0], &s[1], &s[2]);
    let mut x_free: [Option<Event>; 2] = [None, None];
    let mut y_free: [Option<Event>; 2] = [None, None];
    for i in 0..chunks {
        let b = i % 2;
        let (x, y) = &mut bufs[b];
        if let Some(e) = &x_free[b] {
            up.wait(e)?;
        }
        p.upload(up, i, x)?;
        work.wait(&up.record_event()?)?;
        if let Some(e) = &y_free[b] {
            work.wait(e)?;
        }
        p.compute(work, x, y)?;
        let computed = work.record_event()?;
        down.wait(&computed)?;
        x_free[b] = Some(computed);
        p.download(down, i, y, out)?;
        y_free[b] = Some(down.record_event()?);
    }
    Ok(())
}
// ANCHOR_END: three_streams

/// Copy bandwidth from (or into) pageable and pinned host memory.
#[derive(Debug, Clone, Copy)]
pub struct Bandwidth {
    pub dir: CopyDir,
    pub pinned: bool,
    pub bytes: usize,
    pub gb_per_s: f64,
}

/// The median of `reps` timed copies of `bytes` each way, from a `Vec` and from pinned memory.
pub fn pinned_vs_pageable(gpu: &Gpu, bytes: usize, reps: usize) -> Result<Vec<Bandwidth>> {
    let n = bytes / 4;
    let s = gpu.default_stream();
    let pageable: Vec<f32> = vec![1.0; n];
    let mut pageable_out: Vec<f32> = vec![0.0; n];
    // SAFETY: written right away.
    let mut pinned = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    pinned.as_mut_slice()?.fill(1.0);
    let mut dev = s.alloc_zeros::<f32>(n)?;
    let mut out = Vec::new();
    for dir in [CopyDir::HostToDevice, CopyDir::DeviceToHost] {
        for is_pinned in [false, true] {
            let mut us = Vec::new();
            for _ in 0..reps.max(1) + 1 {
                let start = s.record_event()?;
                match (dir, is_pinned) {
                    (CopyDir::HostToDevice, false) => s.memcpy_htod(&pageable, &mut dev)?,
                    (CopyDir::HostToDevice, true) => s.memcpy_htod(&pinned, &mut dev)?,
                    (_, false) => s.memcpy_dtoh(&dev, &mut pageable_out)?,
                    (_, true) => s.memcpy_dtoh(&dev, &mut pinned)?,
                }
                let end = s.record_event()?;
                us.push(start.elapsed_ms(&end)? as f64 * 1e3);
            }
            us.remove(0); // the first copy of a kind pays for warming up
            us.sort_by(f64::total_cmp);
            let median = us[us.len() / 2].max(1e-3);
            out.push(Bandwidth { dir, pinned: is_pinned, bytes: n * 4, gb_per_s: (n * 4) as f64 / median / 1e3 });
        }
    }
    Ok(out)
}

/// One copy each way, alone and at the same time.
#[derive(Debug, Clone, Copy)]
pub struct Duplex {
    pub bytes: usize,
    /// The slower direction's copy, alone.
    pub alone_us: f64,
    /// Both directions started together, until both are done.
    pub together_us: f64,
}

impl Duplex {
    /// How much longer copies take when both directions run at once (1.0: not at all).
    pub fn slowdown(&self) -> f64 {
        (self.together_us / self.alone_us).max(1.0)
    }
}

/// Times a pinned copy of `bytes` up, one down, and both at once on two streams (medians).
pub fn duplex(gpu: &Gpu, bytes: usize, reps: usize) -> Result<Duplex> {
    let n = bytes / 4;
    let (origin, up, down) = (gpu.default_stream(), gpu.new_stream()?, gpu.new_stream()?);
    // SAFETY: written right away, before any copy reads it.
    let mut src = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    src.as_mut_slice()?.fill(1.0);
    // SAFETY: only the downloads write it, and the host never reads it.
    let mut dst = unsafe { gpu.alloc_pinned::<f32>(n) }?;
    let mut a = up.alloc_zeros::<f32>(n)?;
    let b = down.alloc_zeros::<f32>(n)?;
    gpu.synchronize()?;
    let mut times = [Vec::new(), Vec::new(), Vec::new()]; // up alone, down alone, both
    for _ in 0..reps.max(1) + 1 {
        for (which, t) in times.iter_mut().enumerate() {
            let start = origin.record_event()?;
            up.wait(&start)?;
            down.wait(&start)?;
            if which != 1 {
                up.memcpy_htod(&src, &mut a)?;
            }
            if which != 0 {
                down.memcpy_dtoh(&b, &mut dst)?;
            }
            origin.join(&up)?;
            origin.join(&down)?;
            let end = origin.record_event()?;
            t.push(start.elapsed_ms(&end)? as f64 * 1e3);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.remove(0); // warm-up
        v.sort_by(f64::total_cmp);
        v[v.len() / 2].max(1e-3)
    };
    let [up_us, down_us, both_us] = times.map(median);
    Ok(Duplex { bytes: n * 4, alone_us: up_us.max(down_us), together_us: both_us })
}

/// Chunks the bench and the figures cut the job into by default.
pub const DEFAULT_CHUNKS: usize = 16;

/// Floats per chunk by default: 16 MiB on a GPU, where the host needs tens of microseconds to
/// issue a chunk's three operations (with the trace's events) and smaller chunks would measure
/// that; 4 MiB on the emulator, whose model charges 2 µs per operation.
pub fn default_chunk_elems(gpu: &Gpu) -> usize {
    match gpu.backend() {
        BackendKind::Cuda => 1 << 22,
        BackendKind::Emulator => 1 << 20,
    }
}

/// `gpubook streams-bench`'s report: each design against the bound (its busiest engine) and
/// against serial, the ping-pong goal, and pinned against pageable bandwidth.
pub fn report(gpu: &Gpu, chunks: usize, chunk_elems: usize, bw_bytes: usize, reps: usize) -> Result<(String, Vec<Run>)> {
    let runs = Design::ALL.into_iter().map(|d| run(gpu, d, chunks, chunk_elems)).collect::<Result<Vec<_>>>()?;
    let engines = Engines::of(&runs[0].trace);
    let both_ways = duplex(gpu, bw_bytes, reps)?;
    // In a pipeline both copy engines work at once, each a little slower than alone (they
    // share the host's memory and the PCIe link's flow control): the bound counts that.
    let f = both_ways.slowdown();
    let bound = (engines.h2d_us * f).max(engines.d2h_us * f).max(engines.compute_us);
    let serial = runs[0].elapsed_us;
    let one_chunk = engines.total_us() / chunks as f64;
    let mut s = String::new();
    let mb = chunk_elems * 4 / (1 << 20);
    let _ = writeln!(s, "{chunks} chunks of {chunk_elems} floats ({mb} MiB) in, y = 2x + 0.5, out; {}", timing_note(gpu));
    let _ = writeln!(
        s,
        "engines alone (the serial run): host→device {:.0} µs, device→host {:.0} µs, compute {:.0} µs",
        engines.h2d_us, engines.d2h_us, engines.compute_us
    );
    let _ = writeln!(
        s,
        "both copy directions at once: {:.1} GB/s each, {:.2}× the time of one alone ({} MiB copies)",
        both_ways.bytes as f64 / both_ways.together_us / 1e3,
        f,
        both_ways.bytes >> 20
    );
    let _ = writeln!(s, "bound: the busiest engine, copies at their both-ways speed = {bound:.0} µs");
    // The tables are Markdown, as `gpubook overlap` prints them: a terminal reads them, and the
    // book renders them.
    let _ = writeln!(s);
    let _ = writeln!(s, "| design | time (µs) | × bound | × serial | copy hidden |\n|---|---:|---:|---:|---:|");
    for r in &runs {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.2} | {:.2} | {:.0}% |",
            r.design.name(),
            r.elapsed_us,
            r.elapsed_us / bound,
            r.elapsed_us / serial,
            100.0 * r.hidden().fraction()
        );
    }
    if gpu.backend() == BackendKind::Cuda {
        let ops = runs[0].trace.ops.iter().filter(|o| o.kind.is_copy() || o.kind.is_launch()).count().max(1);
        let per_op = runs[0].issue_us / ops as f64;
        let _ = writeln!(s);
        let _ = writeln!(s, "host: {per_op:.1} µs to issue one operation (serial run, the trace's events included)");
    }
    let goal = 1.1 * bound + one_chunk;
    let pp = runs[1].elapsed_us;
    let verdict = if pp <= goal { "met" } else { "NOT met" };
    let _ = writeln!(s);
    let _ = writeln!(s, "goal: ping-pong ≤ 1.1 × bound + one chunk ({one_chunk:.0} µs) = {goal:.0} µs: {verdict} ({pp:.0} µs)");
    let _ = writeln!(s);
    let bw = pinned_vs_pageable(gpu, bw_bytes, reps)?;
    let _ = writeln!(s, "copy bandwidth, {} MiB, median of {reps}:", bw_bytes >> 20);
    let _ = writeln!(s);
    let _ = writeln!(s, "| direction | pageable GB/s | pinned GB/s | pinned × |\n|---|---:|---:|---:|");
    for dir in [CopyDir::HostToDevice, CopyDir::DeviceToHost] {
        let get = |p: bool| bw.iter().find(|b| b.dir == dir && b.pinned == p).map_or(0.0, |b| b.gb_per_s);
        let name = if dir == CopyDir::HostToDevice { "host → device" } else { "device → host" };
        let _ = writeln!(s, "| {} | {:.1} | {:.1} | {:.2} |", name, get(false), get(true), get(true) / get(false).max(1e-9));
    }
    Ok((s, runs))
}

fn timing_note(gpu: &Gpu) -> String {
    match gpu.backend() {
        BackendKind::Emulator => "times from the emulator's timeline model".into(),
        BackendKind::Cuda => format!("times from CUDA events on {}", gpu.info().name),
    }
}
