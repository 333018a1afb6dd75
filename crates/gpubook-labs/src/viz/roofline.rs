//! The roofline on log-log axes: the memory roof rising with arithmetic intensity, the compute
//! roof flat above the ridge, and the kernels of a [`Roofline`](crate::roofline::Roofline)
//! placed by their intensity: filled where they were timed (a GPU), hollow on the roof where the
//! emulator only counted their bytes.

use super::style::{self, PALETTE, render};
use crate::roofline::Roofline;
use plotters::prelude::*;

pub fn roofline_svg(r: &Roofline, title: &str) -> super::Svg {
    let roofs = &r.roofs;
    let ais: Vec<f64> = r.points.iter().map(|p| p.intensity()).chain([roofs.ridge()]).collect();
    let lo_x = ais.iter().cloned().fold(f64::INFINITY, f64::min).log10().floor().min(-1.0) - 0.3;
    let hi_x = ais.iter().cloned().fold(f64::NEG_INFINITY, f64::max).log10().ceil().max(2.0) + 0.3;
    let top = roofs.peak.log10().ceil() + 0.4;
    let bottom = (roofs.attainable(10f64.powf(lo_x)).log10().floor())
        .min(r.points.iter().filter_map(|p| p.gflop_per_s()).map(|g| g.log10().floor()).fold(f64::INFINITY, f64::min))
        .max(top - 6.0);
    render(style::COLUMN, 460, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(title, (style::FONT, style::TITLE))
            .margin(12)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(lo_x..hi_x, bottom..top)?;
        chart
            .configure_mesh()
            .x_desc("arithmetic intensity (FLOP per byte, log scale)")
            .y_desc("GFLOP/s (log scale)")
            .x_labels(((hi_x - lo_x).ceil() as usize + 1).min(12))
            .y_labels(((top - bottom).ceil() as usize + 1).min(12))
            .x_label_formatter(&|x| power_of_ten(*x))
            .y_label_formatter(&|y| power_of_ten(*y))
            .label_style((style::FONT, style::SMALL))
            .axis_desc_style((style::FONT, style::SMALL))
            .draw()?;
        // The roofs: bandwidth × AI up to the ridge, then the peak.
        let roof: Vec<(f64, f64)> =
            (0..=200).map(|i| lo_x + (hi_x - lo_x) * i as f64 / 200.0).map(|x| (x, roofs.attainable(10f64.powf(x)).log10())).collect();
        chart
            .draw_series(LineSeries::new(roof, style::INK.stroke_width(3)))?
            .label(format!("roofs: {:.0} GB/s, {:.1} TFLOP/s", roofs.bandwidth, roofs.peak / 1e3))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style::INK.stroke_width(3)));
        for (i, p) in r.points.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let x = p.intensity().log10();
            let (y, filled) = match p.gflop_per_s() {
                Some(g) => (g.max(1e-9).log10(), true),
                None => (roofs.attainable(p.intensity()).log10(), false),
            };
            let style = if filled { color.filled() } else { color.stroke_width(3) };
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 7, style)))?
                .label(format!("{} ({:.2} FLOP/B)", p.name, p.intensity()))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, style));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(style::INK)
            .label_font((style::FONT, style::LABEL))
            .draw()?;
        Ok(())
    })
}

/// `3.0` → `1000`, `-1.0` → `0.1`; nothing between the powers of ten.
fn power_of_ten(x: f64) -> String {
    if (x - x.round()).abs() > 1e-9 {
        return String::new();
    }
    let v = 10f64.powi(x.round() as i32);
    if v >= 1.0 { format!("{v:.0}") } else { format!("{v}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roofline::{RoofPoint, Roofs};
    use gpubook::gpu::BackendKind;

    #[test]
    fn the_figure_has_the_roofs_and_every_kernel() {
        let r = Roofline {
            device: "test".into(),
            backend: BackendKind::Emulator,
            roofs: Roofs::h200_datasheet(),
            points: vec![
                RoofPoint { name: "vector add", flops: 1e6, bytes: 12e6, ms: None },
                RoofPoint { name: "fma_peak", flops: 1e9, bytes: 1e3, ms: Some(1.0) },
            ],
        };
        let svg = roofline_svg(&r, "roofline");
        assert!(svg.as_str().contains("4800 GB/s"), "{}", svg.as_str());
        assert!(svg.as_str().contains("vector add (0.08 FLOP/B)") && svg.as_str().contains("fma_peak"));
        assert_eq!(power_of_ten(2.0), "100");
        assert_eq!(power_of_ten(-1.0), "0.1");
        assert_eq!(power_of_ten(0.5), "");
    }
}
