//! The schedule as a picture: one row per rank, one box per op, time left to right.
//!
//! Colours follow the kind of work, in hues that stay apart (F orange, B green, input-only Bz
//! red, W blue, overlapped F&B pairs purple); the shade tells the two directions apart (light:
//! direction 0, with dark words; dark: direction 1, with white words), as in the DualPipe
//! repository's figure. Each box names its op and micro-batch (`F3`, `W0`) where that fits, else
//! its micro-batch; an overlapped pair shows its forward's above its backward's. The right margin
//! gives each rank's bubble, so the figure and the report tell the same story.
//!
//! The chart is drawn 720 px wide, the book's column, so a page shows it at its own size: no text
//! under 11 px. A long schedule gets narrow boxes, and a box too narrow for its words has none.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::layout::Layout;
use crate::op::{Op, OpKind, Slot};
use crate::report::num;
use crate::sim::SimResult;

const WIDTH: u32 = 720;
const ROW: u32 = 38;
const FONT: &str = "sans-serif";
/// Sizes of the title, of the labels and legend, and of ticks and a box's words, as plotters
/// takes them: its SVG writes 0.806 × the size given, so these show 16, 12.9 and 11.3 px.
const TITLE: u32 = 20;
const LABEL: u32 = 16;
const SMALL: u32 = 14;
const LEGEND_LINE: i32 = 22;
/// A box fills its row from `TOP` to `BOTTOM` (in rows), leaving a gap between ranks.
const TOP: f64 = 0.08;
const BOTTOM: f64 = 0.92;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// The Gantt chart of a simulation, as an SVG document.
pub fn gantt_svg(result: &SimResult, title: &str) -> String {
    let legend = legend_items(&result.schedule.layout, &present(result));
    let legend_h = (legend_lines(&legend) * LEGEND_LINE + 10) as u32;
    let height = 78 + result.spans.len() as u32 * ROW + legend_h;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        // The SVG backend writes into memory and needs no font files, so it cannot fail.
        draw(&root, result, title, &legend, legend_h).expect("drawing an SVG into a String");
        root.present().expect("finishing an SVG in a String");
    }
    svg
}

fn draw(root: &Area<'_>, result: &SimResult, title: &str, legend: &[Item], legend_h: u32) -> DrawResult {
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(root.dim_in_pixel().1 - legend_h);
    let end = result.makespan.max(1e-9);
    root.draw(&Text::new(title.to_string(), (12, 18), label_style(TITLE, BLACK, HPos::Left)))?;
    let mut chart = ChartBuilder::on(&top)
        .margin_top(34)
        .margin_left(8)
        .margin_right(78)
        .x_label_area_size(40)
        .y_label_area_size(52)
        // Rank 0 on top: the y axis runs downwards.
        .build_cartesian_2d(0f64..end, result.spans.len() as f64..0f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(8)
        .x_desc("time (the unit of F, B and W)")
        .x_label_formatter(&|t| num(*t))
        .label_style((FONT, SMALL))
        .axis_desc_style((FONT, SMALL))
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
        root.draw(&Text::new(format!("rank {rank}"), (left - 6, mid), label_style(LABEL, BLACK, HPos::Right)))?;
        root.draw(&Text::new(format!("bubble {}", num(result.bubbles[rank])), (right + 6, mid), label_style(SMALL, BLACK, HPos::Left)))?;
    }
    draw_legend(&bottom, legend)
}

/// The kinds of op the schedule has, in order of first appearance.
fn present(result: &SimResult) -> Vec<OpKind> {
    let mut present: Vec<OpKind> = Vec::new();
    for kind in result.spans.iter().flatten().map(|s| s.op.kind()) {
        if !present.contains(&kind) {
            present.push(kind);
        }
    }
    present
}

/// The boxes an op is drawn as, with their vertical extent in row `y`: one box, or for an
/// overlapped pair two halves, the forward above the backward.
fn cells(op: &Op, y: f64) -> Vec<(OpKind, Slot, (f64, f64))> {
    match *op {
        Op::Pair(f, b) => vec![(OpKind::Pair, f, (y + TOP, y + 0.5)), (OpKind::Pair, b, (y + 0.5, y + BOTTOM))],
        _ => vec![(op.kind(), op.slots()[0], (y + TOP, y + BOTTOM))],
    }
}

/// One filled box with its op and micro-batch (`F3`), or only the micro-batch, when the box is
/// wide enough to hold the words at a readable size.
fn cell(chart: &mut Chart<'_, '_>, kind: OpKind, dark: bool, mb: usize, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> DrawResult {
    chart.draw_series(std::iter::once(Rectangle::new([(x0, y0), (x1, y1)], colour(kind, dark).filled())))?;
    let (px0, py0) = chart.backend_coord(&(x0, y0));
    let (px1, py1) = chart.backend_coord(&(x1, y1));
    // Plotters' size: 0.806 × it is what shows.
    let size = (f64::from((py1 - py0).abs()) * 0.9).min(16.0) as u32;
    if size < SMALL {
        return Ok(());
    }
    let letter = match kind {
        OpKind::F => "F",
        OpKind::B => "B",
        OpKind::Bz => "Bz",
        OpKind::W => "W",
        OpKind::Pair => "",
    };
    let room = f64::from(px1 - px0) - 3.0;
    let fits = |t: &str| f64::from(size) * 0.5 * t.chars().count() as f64 <= room;
    let text = [format!("{letter}{mb}"), mb.to_string()].into_iter().find(|t| fits(t));
    if let Some(text) = text {
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
        OpKind::Bz => ((251, 154, 153), (211, 32, 39)),
        OpKind::W => ((166, 206, 227), (31, 100, 170)),
        OpKind::Pair => ((202, 178, 214), (106, 61, 154)),
    };
    let (r, g, b) = if dark { deep } else { light };
    RGBColor(r, g, b)
}

/// A legend entry: its swatches (one, or a light and a dark one) and its words.
type Item = (Vec<RGBColor>, String);

/// A swatch per kind of op present (light and dark when there are two directions), and what
/// the shades mean.
fn legend_items(layout: &Layout, present: &[OpKind]) -> Vec<Item> {
    let names = [
        (OpKind::F, "F forward"),
        (OpKind::B, "B backward"),
        (OpKind::Bz, "Bz input gradient only"),
        (OpKind::W, "W weight gradient"),
        (OpKind::Pair, "F&B pair (F above, B below)"),
    ];
    let two = !matches!(layout, Layout::Linear { .. });
    let mut items: Vec<Item> = names
        .into_iter()
        .filter(|(k, _)| present.contains(k))
        .map(|(k, name)| {
            let swatches = if two { vec![colour(k, false), colour(k, true)] } else { vec![colour(k, false)] };
            (swatches, name.to_string())
        })
        .collect();
    match layout {
        Layout::Linear { .. } => {}
        Layout::Dual { .. } => {
            items.push((vec![], "light: direction 0 (enters at rank 0)".into()));
            items.push((vec![], "dark: direction 1 (enters at the last rank)".into()));
        }
        Layout::V { .. } => {
            items.push((vec![], "light: down the V (chunk 0)".into()));
            items.push((vec![], "dark: back up the V (chunk 1)".into()));
        }
    }
    items
}

fn item_width((swatches, words): &Item) -> i32 {
    16 * swatches.len() as i32 + 8 + (words.chars().count() as f64 * f64::from(LABEL) * 0.48).ceil() as i32 + 18
}

fn legend_lines(items: &[Item]) -> i32 {
    let (mut lines, mut x) = (1, 12);
    for it in items {
        if x > 12 && x + item_width(it) > WIDTH as i32 - 8 {
            lines += 1;
            x = 12;
        }
        x += item_width(it);
    }
    lines
}

fn draw_legend(area: &Area<'_>, items: &[Item]) -> DrawResult {
    let (mut x, mut y) = (12, LEGEND_LINE / 2 + 2);
    for it in items {
        if x > 12 && x + item_width(it) > WIDTH as i32 - 8 {
            x = 12;
            y += LEGEND_LINE;
        }
        let (swatches, words) = it;
        let mut sx = x;
        for c in swatches {
            area.draw(&Rectangle::new([(sx, y - 7), (sx + 16, y + 7)], c.filled()))?;
            sx += 16;
        }
        let tx = if swatches.is_empty() { x } else { sx + 6 };
        area.draw(&Text::new(words.clone(), (tx, y), label_style(LABEL, BLACK, HPos::Left)))?;
        x += item_width(it);
    }
    Ok(())
}
