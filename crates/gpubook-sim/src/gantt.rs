//! The schedule as a picture: one row per rank, one box per op, time left to right.
//!
//! Colours follow the kind of work (F orange, B green, input-only Bz teal, W blue, overlapped
//! F&B pairs purple); the shade tells the two directions apart (light: direction 0, with dark
//! numbers; dark: direction 1, with white numbers), as in the DualPipe repository's figure. Each
//! box shows its micro-batch; an overlapped pair shows its forward's above its backward's. The
//! right margin gives each rank's bubble, so the figure and the report tell the same story.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::layout::Layout;
use crate::op::{Op, OpKind, Slot};
use crate::report::num;
use crate::sim::SimResult;

const WIDTH: u32 = 1280;
const ROW: u32 = 44;
const LEGEND: u32 = 56;
const FONT: &str = "sans-serif";
/// A box fills its row from `TOP` to `BOTTOM` (in rows), leaving a gap between ranks.
const TOP: f64 = 0.08;
const BOTTOM: f64 = 0.92;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// The Gantt chart of a simulation, as an SVG document.
pub fn gantt_svg(result: &SimResult, title: &str) -> String {
    let height = 90 + result.spans.len() as u32 * ROW + LEGEND;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        // The SVG backend writes into memory and needs no font files, so it cannot fail.
        draw(&root, result, title).expect("drawing an SVG into a String");
        root.present().expect("finishing an SVG in a String");
    }
    svg
}

fn draw(root: &Area<'_>, result: &SimResult, title: &str) -> DrawResult {
    root.fill(&WHITE)?;
    let (top, legend) = root.split_vertically(root.dim_in_pixel().1 - LEGEND);
    let end = result.makespan.max(1e-9);
    let mut chart = ChartBuilder::on(&top)
        .caption(title, (FONT, 22))
        .margin(12)
        .margin_right(90)
        .x_label_area_size(38)
        .y_label_area_size(60)
        // Rank 0 on top: the y axis runs downwards.
        .build_cartesian_2d(0f64..end, result.spans.len() as f64..0f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("time")
        .x_label_formatter(&|t| num(*t))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()?;

    let layout = &result.schedule.layout;
    for (rank, spans) in result.spans.iter().enumerate() {
        let y = rank as f64;
        for span in spans {
            let xs = (span.start, span.end);
            for (kind, slot, ys) in cells(&span.op, y) {
                let dark = layout.direction(rank, slot.chunk) == 1;
                cell(&mut chart, kind, dark, slot.mb, xs, ys)?;
            }
            // One outline around the whole op, so that a pair reads as one box.
            chart.draw_series(std::iter::once(Rectangle::new([(xs.0, y + TOP), (xs.1, y + BOTTOM)], BLACK.mix(0.55).stroke_width(1))))?;
        }
        // Rank names on the left, bubbles on the right.
        let (left, mid) = chart.backend_coord(&(0.0, y + 0.5));
        let (right, _) = chart.backend_coord(&(end, y + 0.5));
        let style = |h| label_style(14, BLACK, h);
        root.draw(&Text::new(format!("rank {rank}"), (left - 8, mid), style(HPos::Right)))?;
        root.draw(&Text::new(format!("bubble {}", num(result.bubbles[rank])), (right + 8, mid), style(HPos::Left)))?;
    }
    let mut present: Vec<OpKind> = Vec::new();
    for kind in result.spans.iter().flatten().map(|s| s.op.kind()) {
        if !present.contains(&kind) {
            present.push(kind);
        }
    }
    draw_legend(&legend, layout, &present)
}

/// The boxes an op is drawn as, with their vertical extent in row `y`: one box, or for an
/// overlapped pair two halves, the forward above the backward.
fn cells(op: &Op, y: f64) -> Vec<(OpKind, Slot, (f64, f64))> {
    match *op {
        Op::Pair(f, b) => vec![(OpKind::Pair, f, (y + TOP, y + 0.5)), (OpKind::Pair, b, (y + 0.5, y + BOTTOM))],
        _ => vec![(op.kind(), op.slots()[0], (y + TOP, y + BOTTOM))],
    }
}

/// One filled box with its micro-batch number, when the box is wide enough to hold it.
fn cell(chart: &mut Chart<'_, '_>, kind: OpKind, dark: bool, mb: usize, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> DrawResult {
    chart.draw_series(std::iter::once(Rectangle::new([(x0, y0), (x1, y1)], colour(kind, dark).filled())))?;
    let (px0, py0) = chart.backend_coord(&(x0, y0));
    let (px1, py1) = chart.backend_coord(&(x1, y1));
    let text = mb.to_string();
    let size = (f64::from((py1 - py0).abs()) * 0.72).min(14.0) as u32;
    if f64::from(px1 - px0) >= f64::from(size) * 0.62 * text.len() as f64 + 2.0 {
        let ink = if dark { WHITE } else { BLACK };
        chart.plotting_area().draw(&Text::new(text, ((x0 + x1) / 2.0, (y0 + y1) / 2.0), label_style(size, ink, HPos::Center)))?;
    }
    Ok(())
}

fn label_style(size: u32, ink: RGBColor, h: HPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&ink).pos(Pos::new(h, VPos::Center))
}

fn colour(kind: OpKind, dark: bool) -> RGBColor {
    let (light, deep) = match kind {
        OpKind::F => ((253, 191, 111), (224, 130, 20)),
        OpKind::B => ((178, 223, 138), (51, 160, 44)),
        OpKind::Bz => ((153, 216, 201), (27, 133, 120)),
        OpKind::W => ((166, 206, 227), (31, 120, 180)),
        OpKind::Pair => ((202, 178, 214), (106, 61, 154)),
    };
    let (r, g, b) = if dark { deep } else { light };
    RGBColor(r, g, b)
}

/// A swatch per kind of op present (light and dark when there are two directions), and what
/// the shades mean.
fn draw_legend(area: &Area<'_>, layout: &Layout, present: &[OpKind]) -> DrawResult {
    let items = [
        (OpKind::F, "F forward"),
        (OpKind::B, "B backward"),
        (OpKind::Bz, "Bz input-grad only"),
        (OpKind::W, "W weight grad"),
        (OpKind::Pair, "F&B overlapped (F above, B below)"),
    ];
    let shades = match layout {
        Layout::Linear { .. } => None,
        Layout::Dual { .. } => Some(
            "light: direction 0 (enters at rank 0, numbers in black); \
             dark: direction 1 (enters at the last rank, numbers in white)",
        ),
        Layout::V { .. } => Some(
            "light: down the V (chunk 0, numbers in black); \
             dark: back up the V (chunk 1, numbers in white)",
        ),
    };
    let (mut x, y) = (70, 18);
    for (kind, name) in items.into_iter().filter(|(k, _)| present.contains(k)) {
        let shades_shown: &[bool] = if shades.is_some() { &[false, true] } else { &[false] };
        for &dark in shades_shown {
            area.draw(&Rectangle::new([(x, y - 8), (x + 16, y + 8)], colour(kind, dark).filled()))?;
            x += 16;
        }
        area.draw(&Text::new(name, (x + 8, y), label_style(14, BLACK, HPos::Left)))?;
        x += 40 + 7 * name.len() as i32;
    }
    if let Some(text) = shades {
        area.draw(&Text::new(text, (70, y + 24), label_style(14, BLACK, HPos::Left)))?;
    }
    Ok(())
}
