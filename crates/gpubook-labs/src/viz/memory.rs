//! Chapter 5's figures: how many 32-byte sectors a warp's loads touch as the stride between its
//! lanes grows (counted by the emulator), and how many blocks an SM holds as the block grows,
//! for a few register budgets (computed from the SM's limits).

use super::style::{self, PALETTE, render};
use crate::counted::StridePoint;
use gpubook::gpu::{BlockResources, SmLimits, block_limits};
use plotters::prelude::*;

/// Sectors per warp request against the stride, with the bytes used of those moved.
pub fn sectors_svg(points: &[StridePoint], title: &str) -> super::Svg {
    let max_stride = points.iter().map(|p| p.stride).max().unwrap_or(32).max(2) as f64;
    render(style::COLUMN, 420, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(title, (style::FONT, style::TITLE))
            .margin(12)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .right_y_label_area_size(56)
            .build_cartesian_2d(0.0..max_stride + 1.0, 0.0..34.0)?
            .set_secondary_coord(0.0..max_stride + 1.0, 0.0..110.0);
        chart
            .configure_mesh()
            .x_desc("floats between neighbouring lanes' addresses")
            .y_desc("32-byte sectors per warp request")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((style::FONT, style::SMALL))
            .axis_desc_style((style::FONT, style::SMALL))
            .draw()?;
        chart
            .configure_secondary_axes()
            .y_desc("% of moved bytes used")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((style::FONT, style::SMALL))
            .axis_desc_style((style::FONT, style::SMALL))
            .draw()?;
        let sectors: Vec<(f64, f64)> = points.iter().map(|p| (p.stride as f64, p.sectors_per_request)).collect();
        let color = PALETTE[0];
        chart
            .draw_series(LineSeries::new(sectors.clone(), color.stroke_width(3)))?
            .label("sectors per request (left)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
        chart.draw_series(sectors.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
        let used: Vec<(f64, f64)> = points.iter().map(|p| (p.stride as f64, 100.0 * p.efficiency)).collect();
        let other = PALETTE[1];
        chart
            .draw_secondary_series(LineSeries::new(used.clone(), other.stroke_width(2)))?
            .label("bytes used of bytes moved (right)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], other.stroke_width(2)));
        chart.draw_secondary_series(used.into_iter().map(|p| Circle::new(p, 3, other.filled())))?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::MiddleRight)
            .background_style(WHITE.mix(0.9))
            .border_style(style::INK)
            .label_font((style::FONT, style::LABEL))
            .draw()?;
        Ok(())
    })
}

/// Occupancy (resident warps over the SM's maximum) against threads per block, one line per
/// register budget, for blocks with `shared_bytes` of shared memory each.
pub fn occupancy_svg(sm: &SmLimits, registers: &[u32], shared_bytes: u32, title: &str) -> super::Svg {
    let sizes: Vec<u32> = (1..=32).map(|w| w * 32).collect();
    render(style::COLUMN, 420, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(title, (style::FONT, style::TITLE))
            .margin(12)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(0u32..1056u32, 0.0..110.0)?;
        chart
            .configure_mesh()
            .x_desc("threads per block")
            .y_desc("occupancy: % of the SM's warps resident")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_labels(9)
            .label_style((style::FONT, style::SMALL))
            .axis_desc_style((style::FONT, style::SMALL))
            .draw()?;
        for (i, &r) in registers.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let line: Vec<(u32, f64)> = sizes
                .iter()
                .map(|&threads| {
                    let blocks = block_limits(sm, &BlockResources { threads, registers_per_thread: r, shared_bytes }).resident();
                    (threads, 100.0 * (blocks * threads.div_ceil(sm.warp_size)) as f64 / sm.max_warps() as f64)
                })
                .collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(3)))?
                .label(format!("{r} registers a thread"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
            chart.draw_series(line.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(style::INK)
            .label_font((style::FONT, style::LABEL))
            .draw()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_have_their_series() {
        let pts = [
            StridePoint { stride: 1, sectors_per_request: 4.0, efficiency: 1.0 },
            StridePoint { stride: 32, sectors_per_request: 32.0, efficiency: 0.125 },
        ];
        assert!(sectors_svg(&pts, "sectors").as_str().contains("sectors per request (left)"));
        let svg = occupancy_svg(&SmLimits::H200, &[32, 64], 0, "occupancy");
        assert!(svg.as_str().contains("64 registers a thread"));
    }
}
