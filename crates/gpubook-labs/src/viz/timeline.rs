//! Streams over time: one row per stream, one box per copy, memset or kernel, in the colours
//! profilers use (HtoD green, DtoH red, kernels blue). Drawn from any `Gpu::trace`; on a GPU the
//! times are measured with CUDA events, on the emulator they come from its timeline model. The
//! program that made the trace can name its streams and label its operations ([`Labels`]).

use super::style::{self, DTOD, DTOH, HTOD, KERNEL, MEMSET, render};
use gpubook::gpu::{CopyDir, Gpu, LaunchConfig, OpKind, Result, Source, Trace, TraceOp};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// Vector add of `n` floats in `chunks` pieces, round-robin over `streams` new streams: each piece
/// copies its inputs in, adds, and copies its sum out, so one piece's copies can overlap another
/// piece's kernel. Host memory is pinned, as asynchronous copies need. Returns the trace of the
/// work (allocations made beforehand are left out).
pub fn overlap_demo(gpu: &Gpu, streams: usize, chunks: usize, n: usize) -> Result<Trace> {
    let module = gpu.load_module(Source::library("bench/vector_add.cu"))?;
    let f = module.load_function("vector_add_naive")?;
    let streams = (0..streams.max(1)).map(|_| gpu.new_stream()).collect::<Result<Vec<_>>>()?;
    let len = n.div_ceil(chunks.max(1));
    let mut pieces = Vec::new();
    for c in 0..chunks.max(1) {
        let s = &streams[c % streams.len()];
        // SAFETY: filled just below, before any copy reads it.
        let mut a = unsafe { gpu.alloc_pinned::<f32>(len) }?;
        // SAFETY: filled just below, before any copy reads it.
        let mut b = unsafe { gpu.alloc_pinned::<f32>(len) }?;
        a.as_mut_slice()?.fill(1.0);
        b.as_mut_slice()?.fill(2.0);
        // SAFETY: only the download writes it, and the host never reads it.
        let out = unsafe { gpu.alloc_pinned::<f32>(len) }?;
        // SAFETY: the uploads fill the first two, the kernel the third, before anything reads them.
        let dev = unsafe { (s.alloc::<f32>(len)?, s.alloc::<f32>(len)?, s.alloc::<f32>(len)?) };
        pieces.push((s.clone(), a, b, out, dev));
    }
    gpu.synchronize()?;
    let first = gpu.trace()?.ops.len();
    let n_i = len as i32;
    let cfg = LaunchConfig::for_num_elems(len as u32);
    for (s, a, b, out, (a_d, b_d, c_d)) in pieces.iter_mut() {
        s.memcpy_htod(a, a_d)?;
        s.memcpy_htod(b, b_d)?;
        let mut launch = s.launch_builder(&f);
        launch.arg(&*a_d).arg(&*b_d).arg(&mut *c_d).arg(&n_i);
        // SAFETY: a_d, b_d and c_d hold len floats and the kernel's i < n guard keeps the
        // covering grid inside them.
        unsafe { launch.launch(cfg) }?;
        s.memcpy_dtoh(&*c_d, out)?;
    }
    gpu.synchronize()?;
    let trace = gpu.trace()?;
    Ok(Trace { ops: trace.ops[first..].to_vec() })
}

/// A timeline's data: named rows (streams) and the bars on them. Made from a trace
/// ([`Timeline::from_trace`]) and drawn by [`Timeline::svg`]; it serialises, so a run on one
/// machine (a GPU) can be drawn on another (the book's build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub title: String,
    pub rows: Vec<String>,
    pub bars: Vec<Bar>,
}

/// One copy, memset or kernel on its row, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    pub row: usize,
    pub start_us: f64,
    pub end_us: f64,
    pub kind: BarKind,
    /// The words on the bar when they fit, and shorter forms to try, in order, when they do not.
    pub label: String,
    #[serde(default)]
    pub shorter: Vec<String>,
}

/// What a bar is, which decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BarKind {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Kernel,
    Memset,
}

impl BarKind {
    fn colour(self) -> RGBColor {
        match self {
            BarKind::HostToDevice => HTOD,
            BarKind::DeviceToHost => DTOH,
            BarKind::DeviceToDevice => DTOD,
            BarKind::Kernel => KERNEL,
            BarKind::Memset => MEMSET,
        }
    }

    fn words(self) -> &'static str {
        match self {
            BarKind::HostToDevice => "copy host → device",
            BarKind::DeviceToHost => "copy device → host",
            BarKind::DeviceToDevice => "copy device → device",
            BarKind::Kernel => "kernel",
            BarKind::Memset => "memset",
        }
    }
}

/// Names a program gives its streams and operations, where the trace only has numbers: a
/// stream's row name by (device, stream id), and an operation's label by its trace index.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub streams: Vec<((usize, u32), String)>,
    /// (label, shorter forms of it) by [`TraceOp::index`].
    pub ops: HashMap<usize, (String, Vec<String>)>,
}

impl Timeline {
    /// The trace's copies, memsets and kernels, one row per (device, stream). Rows are named by
    /// `labels`, else `stream 0`, `stream 1`, ... in the order the streams were created (the
    /// default stream is `default stream`); bars by `labels`, else by what they did.
    ///
    /// A trace times each operation from when its stream reached it; a copy may then wait for
    /// the copy engine of its direction, which copies on other streams hold. Drawn as is, copies
    /// would seem to run side by side on one engine, so each copy is drawn from when its engine
    /// was free (copies of one direction on one device run one at a time, in order).
    pub fn from_trace(trace: &Trace, title: &str, labels: &Labels) -> Timeline {
        let ops = engine_times(trace.ops.iter().filter(|o| timed(o)).cloned().collect());
        let keys: Vec<(usize, u32)> = ops.iter().map(|o| (o.device, o.stream)).collect::<BTreeSet<_>>().into_iter().collect();
        let devices = keys.iter().map(|r| r.0).collect::<BTreeSet<_>>().len();
        let rows = keys
            .iter()
            .map(|&(d, s)| {
                if let Some((_, name)) = labels.streams.iter().find(|(k, _)| *k == (d, s)) {
                    return name.clone();
                }
                let k = keys.iter().filter(|&&(d2, s2)| d2 == d && s2 != 0 && s2 < s).count();
                let name = if s == 0 { "default stream".to_string() } else { format!("stream {k}") };
                if devices > 1 { format!("GPU {d} {name}") } else { name }
            })
            .collect();
        let bars = ops
            .iter()
            .filter_map(|o| {
                let (kind, words) = kind_of(&o.kind)?;
                let (label, shorter) = labels.ops.get(&o.index).cloned().unwrap_or((words, Vec::new()));
                let row = keys.iter().position(|k| *k == (o.device, o.stream)).unwrap_or(0);
                // To the nanosecond: finer is noise, and a recording stays small.
                let ns = |t: f64| (t * 1e3).round() / 1e3;
                Some(Bar { row, start_us: ns(o.start_us), end_us: ns(o.end_us), kind, label, shorter })
            })
            .collect();
        Timeline { title: title.to_string(), rows, bars }
    }

    /// The timeline for the book's column: a row per stream, bars in the colours profilers use
    /// (HtoD green, DtoH red, kernels blue), labelled where the words fit, and a legend of the
    /// kinds drawn.
    pub fn svg(&self) -> super::Svg {
        let t0 = self.bars.iter().map(|b| b.start_us).fold(f64::INFINITY, f64::min);
        let t1 = self.bars.iter().map(|b| b.end_us).fold(f64::NEG_INFINITY, f64::max);
        let (t0, span) = if t1 > t0 { (t0, t1 - t0) } else { (0.0, 1.0) };
        // Milliseconds once the run is long enough that microseconds make unreadable ticks.
        let (scale, unit) = if span >= 5_000.0 { (1e-3, "ms") } else { (1.0, "µs") };
        let width = style::COLUMN as i32;
        let mut kinds: Vec<BarKind> = Vec::new();
        for b in &self.bars {
            if !kinds.contains(&b.kind) {
                kinds.push(b.kind);
            }
        }
        let entries: Vec<(RGBColor, String)> = kinds.iter().map(|k| (k.colour(), k.words().to_string())).collect();
        let legend_h = style::legend_lines(&entries, 16, width - 16) * style::LEGEND_LINE + 10;
        let rows = self.rows.len().max(1);
        let name_w = self.rows.iter().map(|r| style::text_width(r, style::LABEL)).max().unwrap_or(40).clamp(40, 220) + 12;
        let height = 44 + rows as i32 * ROW + 46 + legend_h;
        render(width as u32, height as u32, |area| {
            let (top, bottom) = area.split_vertically(height - legend_h);
            area.draw(&Text::new(self.title.clone(), (14, 18), style::label(style::TITLE)))?;
            let mut chart = ChartBuilder::on(&top)
                .margin_top(36)
                .margin_right(16)
                .margin_left(8)
                .x_label_area_size(42)
                .y_label_area_size(name_w)
                .build_cartesian_2d(0f64..span * scale, rows as f64..0f64)?;
            let row_name = |r: f64| -> String {
                let i = r.floor() as usize;
                if (r.fract() - 0.5).abs() < 0.01 { self.rows.get(i).cloned().unwrap_or_default() } else { String::new() }
            };
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(rows * 2 + 1)
                .y_label_formatter(&|y| row_name(*y))
                .x_labels(6)
                .x_desc(format!("time ({unit}) since the first operation"))
                .label_style((style::FONT, style::SMALL))
                .axis_desc_style((style::FONT, style::SMALL))
                .draw()?;
            let plot_px = (width - name_w - 24) as f64;
            let px_per_unit = plot_px / (span * scale);
            for b in &self.bars {
                let r = b.row as f64;
                let (x0, x1) = ((b.start_us - t0) * scale, (b.end_us - t0) * scale);
                chart.draw_series(std::iter::once(Rectangle::new([(x0, r + 0.15), (x1, r + 0.85)], b.kind.colour().filled())))?;
                chart.draw_series(std::iter::once(Rectangle::new([(x0, r + 0.15), (x1, r + 0.85)], WHITE.stroke_width(1))))?;
                let room = (x1 - x0) * px_per_unit - 4.0;
                let words = std::iter::once(&b.label)
                    .chain(&b.shorter)
                    .find(|w| !w.is_empty() && style::text_width(w, style::SMALL) as f64 <= room);
                if let Some(words) = words {
                    let style = style::text(style::SMALL, WHITE, style::Pos::new(style::HPos::Center, style::VPos::Center));
                    chart.draw_series(std::iter::once(Text::new(words.clone(), ((x0 + x1) / 2.0, r + 0.5), style)))?;
                }
            }
            style::legend(&bottom, &entries, 16, style::LEGEND_LINE / 2, width - 16)
        })
    }
}

/// The trace's copies, memsets and kernels on a time axis, one row per (device, stream), named
/// and labelled from the trace alone ([`Timeline::from_trace`] with no [`Labels`]).
pub fn timeline_svg(trace: &Trace, title: &str) -> super::Svg {
    Timeline::from_trace(trace, title, &Labels::default()).svg()
}

const ROW: i32 = 34;

/// Copies moved to start no earlier than the previous copy of their direction on their device
/// ended (see [`timeline_svg`]).
fn engine_times(mut ops: Vec<TraceOp>) -> Vec<TraceOp> {
    ops.sort_by(|a, b| a.end_us.total_cmp(&b.end_us));
    // When each (device, direction) engine is next free.
    let mut free: std::collections::HashMap<(usize, u8), f64> = std::collections::HashMap::new();
    for op in ops.iter_mut() {
        if let OpKind::Copy { dir, .. } = op.kind {
            let engine = free.entry((op.device, dir as u8)).or_insert(f64::NEG_INFINITY);
            op.start_us = op.start_us.max(*engine).min(op.end_us);
            *engine = op.end_us;
        }
    }
    ops
}

fn timed(op: &TraceOp) -> bool {
    let kind = matches!(op.kind, OpKind::Copy { .. } | OpKind::Launch { .. } | OpKind::Memset { .. });
    kind && op.start_us.is_finite() && op.end_us.is_finite()
}

/// An op's kind of bar and its words, for the ops a timeline draws.
fn kind_of(kind: &OpKind) -> Option<(BarKind, String)> {
    match kind {
        OpKind::Copy { dir, bytes, .. } => {
            let (k, d) = match dir {
                CopyDir::HostToDevice => (BarKind::HostToDevice, "HtoD"),
                CopyDir::DeviceToHost => (BarKind::DeviceToHost, "DtoH"),
                CopyDir::DeviceToDevice => (BarKind::DeviceToDevice, "DtoD"),
            };
            Some((k, format!("{d} {}", short_bytes(*bytes))))
        }
        OpKind::Launch { kernel, .. } => Some((BarKind::Kernel, kernel.clone())),
        OpKind::Memset { .. } => Some((BarKind::Memset, "memset".into())),
        _ => None,
    }
}

fn short_bytes(b: usize) -> String {
    match b {
        b if b >= 1 << 20 => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.0} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(stream: u32, kind: OpKind, s: f64, e: f64) -> TraceOp {
        TraceOp { index: 0, device: 0, stream, kind, start_us: s, end_us: e }
    }

    #[test]
    fn a_copy_starts_when_its_engine_is_free() {
        let copy = || OpKind::Copy { dir: CopyDir::HostToDevice, bytes: 8, pinned: true, src: None, dst: None, digest: None, host: None };
        let ops = engine_times(vec![op(1, copy(), 0.0, 30.0), op(2, copy(), 5.0, 60.0)]);
        assert_eq!((ops[1].start_us, ops[1].end_us), (30.0, 60.0));
    }

    #[test]
    fn one_row_per_stream_and_untimed_ops_left_out() {
        let copy =
            OpKind::Copy { dir: CopyDir::HostToDevice, bytes: 4 << 20, pinned: true, src: None, dst: None, digest: None, host: None };
        let launch =
            OpKind::Launch { kernel: "vector_add".into(), grid: [1; 3], block: [1; 3], shared_mem_bytes: 0, buffers: vec![], counts: None };
        let t = Trace { ops: vec![op(1, copy, 0.0, 400.0), op(2, launch, 100.0, 900.0), op(1, OpKind::RecordEvent, 5.0, 5.0)] };
        let svg = timeline_svg(&t, "two streams");
        let s = svg.as_str();
        // Streams are numbered from 0 in the order they were made, as the chapters count them.
        assert!(s.contains("stream 0") && s.contains("stream 1") && !s.contains("stream 2") && !s.contains("default stream"), "{s}");
        assert!(s.contains("HtoD 4 MiB") && s.contains("vector_add"));
    }

    #[test]
    fn labels_name_rows_and_bars_and_the_data_round_trips() {
        let launch =
            OpKind::Launch { kernel: "layer".into(), grid: [1; 3], block: [1; 3], shared_mem_bytes: 0, buffers: vec![], counts: None };
        let mut k = op(7, launch, 0.0, 1000.0);
        k.index = 3;
        let labels = Labels {
            streams: vec![((0, 7), "computation".into())],
            ops: [(3, ("ATTN(F)".to_string(), vec!["A".to_string()]))].into_iter().collect(),
        };
        let t = Timeline::from_trace(&Trace { ops: vec![k] }, "pair", &labels);
        assert_eq!(t.rows, ["computation"]);
        assert_eq!(t.bars[0].label, "ATTN(F)");
        let back: Timeline = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        assert!(t.svg().as_str().contains("ATTN(F)"));
    }
}
