//! Streams over time: one row per stream, one box per copy, memset or kernel, in the colours
//! profilers use (HtoD green, DtoH red, kernels blue). Drawn from any `Gpu::trace`; on a GPU the
//! times are measured with CUDA events, on the emulator they come from its timeline model.

use super::style::{self, DTOD, DTOH, HTOD, INK, KERNEL, MEMSET, render, text_width};
use crate::gpu::{CopyDir, Gpu, LaunchConfig, OpKind, Result, Source, Trace, TraceOp};
use plotters::prelude::*;
use std::collections::BTreeSet;

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
        let mut a = unsafe { gpu.alloc_pinned::<f32>(len) }?;
        let mut b = unsafe { gpu.alloc_pinned::<f32>(len) }?;
        a.as_mut_slice()?.fill(1.0);
        b.as_mut_slice()?.fill(2.0);
        let out = unsafe { gpu.alloc_pinned::<f32>(len) }?;
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
        unsafe { launch.launch(cfg) }?;
        s.memcpy_dtoh(&*c_d, out)?;
    }
    gpu.synchronize()?;
    let trace = gpu.trace()?;
    Ok(Trace { ops: trace.ops[first..].to_vec() })
}

const WIDTH: u32 = 820;
const ROW: u32 = 44;

/// The trace's copies, memsets and kernels on a time axis, one row per (device, stream).
///
/// A trace times each operation from when its stream reached it; a copy may then wait for the
/// copy engine of its direction, which copies on other streams hold. Drawn as is, copies would
/// seem to run side by side on one engine, so each copy is drawn from when its engine was free
/// (copies of one direction on one device run one at a time, in order).
pub fn timeline_svg(trace: &Trace, title: &str) -> super::Svg {
    let ops = engine_times(trace.ops.iter().filter(|o| timed(o)).cloned().collect());
    let ops: Vec<&TraceOp> = ops.iter().collect();
    let rows: Vec<(usize, u32)> = ops.iter().map(|o| (o.device, o.stream)).collect::<BTreeSet<_>>().into_iter().collect();
    let devices = rows.iter().map(|r| r.0).collect::<BTreeSet<_>>().len();
    let t0 = ops.iter().map(|o| o.start_us).fold(f64::INFINITY, f64::min);
    let t1 = ops.iter().map(|o| o.end_us).fold(f64::NEG_INFINITY, f64::max);
    let (t0, span) = if t1 > t0 { (t0, t1 - t0) } else { (0.0, 1.0) };
    // Milliseconds once the run is long enough that microseconds make unreadable ticks.
    let (scale, unit) = if span >= 5_000.0 { (1e-3, "ms") } else { (1.0, "µs") };
    let height = 100 + rows.len().max(1) as u32 * ROW + 40;
    render(WIDTH, height, |area| {
        let (top, bottom) = area.split_vertically(height - 40);
        let mut chart = ChartBuilder::on(&top)
            .caption(title, (style::FONT, 20))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(110)
            .build_cartesian_2d(0f64..span * scale, rows.len().max(1) as f64..0f64)?;
        let row_name = |r: f64| -> String {
            let i = r.floor() as usize;
            match rows.get(i) {
                Some((d, s)) if devices > 1 => format!("GPU {d} stream {s}"),
                Some((_, 0)) => "default stream".into(),
                Some((_, s)) => format!("stream {s}"),
                None => String::new(),
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len() * 2 + 1)
            .y_label_formatter(&|y| {
                if (y.fract() - 0.5).abs() < 0.01 { row_name(*y) } else { String::new() }
            })
            .x_desc(format!("time ({unit}) since the first operation"))
            .label_style((style::FONT, 13))
            .draw()?;
        let px_per_unit = (WIDTH as f64 - 150.0) / (span * scale);
        for op in &ops {
            let r = rows.iter().position(|k| *k == (op.device, op.stream)).unwrap_or(0) as f64;
            let (x0, x1) = ((op.start_us - t0) * scale, (op.end_us - t0) * scale);
            let (fill, name) = paint(&op.kind);
            chart.draw_series(std::iter::once(Rectangle::new([(x0, r + 0.15), (x1, r + 0.85)], fill.filled())))?;
            chart.draw_series(std::iter::once(Rectangle::new([(x0, r + 0.15), (x1, r + 0.85)], WHITE.stroke_width(1))))?;
            if text_width(&name, 12) as f64 + 6.0 < (x1 - x0) * px_per_unit {
                let style = style::text(12, WHITE, style::Pos::new(style::HPos::Center, style::VPos::Center));
                chart.draw_series(std::iter::once(Text::new(name, ((x0 + x1) / 2.0, r + 0.5), style)))?;
            }
        }
        // A legend entry for each kind of box that is drawn.
        let mut x = 120;
        for (c, words) in [
            (HTOD, "copy host → device"),
            (KERNEL, "kernel"),
            (DTOH, "copy device → host"),
            (DTOD, "copy device → device"),
            (MEMSET, "memset"),
        ] {
            if ops.iter().any(|o| paint(&o.kind).0 == c) {
                x = style::legend_entry(&bottom, x, 16, c, words)?;
            }
        }
        Ok(())
    })
}

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

/// An op's colour and its words on the box.
fn paint(kind: &OpKind) -> (RGBColor, String) {
    match kind {
        OpKind::Copy { dir, bytes, .. } => {
            let (c, d) = match dir {
                CopyDir::HostToDevice => (HTOD, "HtoD"),
                CopyDir::DeviceToHost => (DTOH, "DtoH"),
                CopyDir::DeviceToDevice => (DTOD, "DtoD"),
            };
            (c, format!("{d} {}", short_bytes(*bytes)))
        }
        OpKind::Launch { kernel, .. } => (KERNEL, kernel.clone()),
        OpKind::Memset { .. } => (MEMSET, "memset".into()),
        _ => (INK, String::new()),
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
        assert!(s.contains("stream 1") && s.contains("stream 2") && !s.contains("default stream"));
        assert!(s.contains("HtoD 4 MiB") && s.contains("vector_add"));
    }
}
