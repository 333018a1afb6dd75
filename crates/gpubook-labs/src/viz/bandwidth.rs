//! Copy bandwidth against transfer size, read from a run's trace: small copies are dominated by
//! a fixed cost per copy, large ones approach the link's bandwidth, and pinned host memory is
//! faster than pageable (which the driver must stage through a pinned buffer).

use super::style::{self, DTOH, HTOD, render};
use gpubook::gpu::{CopyDir, Gpu, OpKind, Result, Trace};
use plotters::prelude::*;

/// One copy: its direction, host memory kind, size and time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandwidthPoint {
    pub dir: CopyDir,
    pub pinned: bool,
    pub bytes: usize,
    pub micros: f64,
}

impl BandwidthPoint {
    /// GB/s (10⁹ bytes a second), the unit bandwidth is quoted in.
    pub fn gb_per_s(&self) -> f64 {
        if self.micros > 0.0 { self.bytes as f64 / self.micros / 1e3 } else { 0.0 }
    }
}

/// Every host↔device copy of the trace that took time.
pub fn bandwidth_from_trace(trace: &Trace) -> Vec<BandwidthPoint> {
    trace
        .ops
        .iter()
        .filter_map(|op| match op.kind {
            OpKind::Copy { dir, bytes, pinned, .. } if dir != CopyDir::DeviceToDevice && op.duration_us() > 0.0 => {
                Some(BandwidthPoint { dir, pinned, bytes, micros: op.duration_us() })
            }
            _ => None,
        })
        .collect()
}

/// 4 KiB to 64 MiB in steps of 4×.
pub fn default_sizes() -> Vec<usize> {
    (12..=26).step_by(2).map(|p| 1usize << p).collect()
}

/// Copies `sizes` bytes each way from pageable and from pinned memory, `reps` times, and keeps the
/// fastest of each (the steady state, not first-touch costs). Each copy starts on an idle device
/// (the stream is synchronised before it), so that every copy is timed alike: from when the
/// host issues it to when its data has arrived. Without that, a copy issued while the host is
/// ahead of the stream is timed without its issue cost, and one issued behind it with the wait.
pub fn measure_bandwidth(gpu: &Gpu, sizes: &[usize], reps: usize) -> Result<Vec<BandwidthPoint>> {
    let stream = gpu.default_stream();
    let first = gpu.trace()?.ops.len();
    for &bytes in sizes {
        let n = bytes / 4;
        let pageable = vec![1.0f32; n];
        let mut pageable_back = vec![0.0f32; n];
        // SAFETY: filled just below, before any copy reads it.
        let mut pinned = unsafe { gpu.alloc_pinned::<f32>(n) }?;
        pinned.as_mut_slice()?.fill(1.0);
        let mut device = stream.alloc_zeros::<f32>(n)?;
        stream.synchronize()?;
        for _ in 0..reps.max(1) {
            stream.memcpy_htod(&pageable, &mut device)?;
            stream.synchronize()?;
            stream.memcpy_dtoh(&device, &mut pageable_back)?;
            stream.synchronize()?;
            stream.memcpy_htod(&pinned, &mut device)?;
            stream.synchronize()?;
            stream.memcpy_dtoh(&device, &mut pinned)?;
            stream.synchronize()?;
        }
    }
    let trace = gpu.trace()?;
    let ours = Trace { ops: trace.ops[first..].to_vec() };
    let mut best: Vec<BandwidthPoint> = Vec::new();
    for p in bandwidth_from_trace(&ours) {
        match best.iter_mut().find(|b| (b.dir, b.pinned, b.bytes) == (p.dir, p.pinned, p.bytes)) {
            Some(b) if p.micros < b.micros => *b = p,
            Some(_) => {}
            None => best.push(p),
        }
    }
    Ok(best)
}

/// Bandwidth (GB/s) against size, one line per direction and host memory kind. Sizes go on a
/// log₂ axis with ticks at powers of two, so they read `4 KiB`, `64 KiB`, `1 MiB`.
pub fn bandwidth_svg(points: &[BandwidthPoint], title: &str) -> super::Svg {
    let log2 = |b: usize| (b.max(1) as f64).log2();
    let lo = points.iter().map(|p| log2(p.bytes)).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| log2(p.bytes)).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi > lo { (lo.floor(), hi.ceil()) } else { (10.0, 20.0) };
    let top = points.iter().map(BandwidthPoint::gb_per_s).fold(0.0, f64::max).max(1e-3) * 1.15;
    render(style::COLUMN, 420, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(title, (style::FONT, style::TITLE))
            .margin(12)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(lo..hi, 0f64..top)?;
        chart
            .configure_mesh()
            .x_desc("bytes per copy (log scale)")
            .y_desc("GB/s (10⁹ bytes a second)")
            .axis_desc_style((style::FONT, style::SMALL))
            .x_labels((hi - lo) as usize + 1)
            .x_label_formatter(&|x| {
                if x.fract().abs() < 1e-9 { human_bytes(x.exp2()) } else { String::new() }
            })
            .label_style((style::FONT, style::SMALL))
            .draw()?;
        for (dir, pinned) in
            [(CopyDir::HostToDevice, true), (CopyDir::DeviceToHost, true), (CopyDir::HostToDevice, false), (CopyDir::DeviceToHost, false)]
        {
            let mut series: Vec<(f64, f64)> =
                points.iter().filter(|p| p.dir == dir && p.pinned == pinned).map(|p| (log2(p.bytes), p.gb_per_s())).collect();
            if series.is_empty() {
                continue;
            }
            series.sort_by(|a, b| a.0.total_cmp(&b.0));
            let base = if dir == CopyDir::HostToDevice { HTOD } else { DTOH };
            let color = if pinned { base } else { style::lighten(base, 0.45) };
            // Host to device is drawn first and wider, so that where the two directions are
            // equal (the emulator's model) its colour still edges the other's line.
            let width = match (dir, pinned) {
                (CopyDir::HostToDevice, true) => 6,
                (CopyDir::HostToDevice, false) => 5,
                _ => 2,
            };
            let line = color.stroke_width(width);
            let name =
                format!("{} {}", if dir == CopyDir::HostToDevice { "HtoD" } else { "DtoH" }, if pinned { "pinned" } else { "pageable" });
            chart
                .draw_series(LineSeries::new(series.clone(), line))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
            let dot = if dir == CopyDir::HostToDevice { 5 } else { 3 };
            chart.draw_series(series.into_iter().map(|p| Circle::new(p, dot, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(style::INK)
            .label_font((style::FONT, style::LABEL))
            .draw()?;
        Ok(())
    })
}

/// `65536` → `64 KiB`.
fn human_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 { format!("{} {}", v.round(), units[u]) } else { format!("{v:.1} {}", units[u]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook::gpu::TraceOp;

    fn copy(dir: CopyDir, pinned: bool, bytes: usize, us: f64) -> TraceOp {
        let kind = OpKind::Copy { dir, bytes, pinned, src: None, dst: None, digest: None, host: None };
        TraceOp { index: 0, device: 0, stream: 0, kind, start_us: 10.0, end_us: 10.0 + us }
    }

    #[test]
    fn points_come_from_the_copies_of_a_trace() {
        let t = Trace { ops: vec![copy(CopyDir::HostToDevice, true, 1 << 20, 50.0), copy(CopyDir::DeviceToDevice, false, 8, 1.0)] };
        let p = bandwidth_from_trace(&t);
        assert_eq!(p.len(), 1);
        assert!((p[0].gb_per_s() - 20.97152).abs() < 1e-9);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(4096.0), "4 KiB");
        assert_eq!(human_bytes(64.0 * 1024.0 * 1024.0), "64 MiB");
        assert_eq!(default_sizes().first(), Some(&4096));
    }

    #[test]
    fn the_figure_has_a_line_per_kind_of_copy() {
        let pts: Vec<_> = [4096usize, 1 << 20]
            .iter()
            .flat_map(|&b| [copy(CopyDir::HostToDevice, true, b, 10.0), copy(CopyDir::DeviceToHost, false, b, 20.0)])
            .collect();
        let svg = bandwidth_svg(&bandwidth_from_trace(&Trace { ops: pts }), "bandwidth");
        assert!(svg.as_str().contains("HtoD pinned") && svg.as_str().contains("DtoH pageable"));
    }
}
