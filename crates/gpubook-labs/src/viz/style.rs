//! Colours, fonts and the one place a figure is rendered into a string.

use plotters::coord::Shift;
use plotters::prelude::*;

pub(crate) const FONT: &str = "sans-serif";

/// The width every figure is drawn at: the book's column (750 px) less a margin, so that a page
/// shows a figure at its own size and its text as drawn. Text is never under `SMALL` - 1 px.
pub const COLUMN: u32 = 720;
/// Font sizes as plotters takes them: titles, labels and legends, and the smallest (ticks, labels
/// inside boxes and cells). Plotters' SVG writes 0.806 × the size it is given (16 → 12.9 px), so
/// these show 16, 12.9 and 11.3 px.
pub(crate) const TITLE: u32 = 20;
pub(crate) const LABEL: u32 = 16;
pub(crate) const SMALL: u32 = 14;

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(crate) type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Hues for blocks (and series), told apart by colour-blind readers too; no red, which means
/// "never written".
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7), // blue
    RGBColor(0xf2, 0x8e, 0x2b), // orange
    RGBColor(0x59, 0xa1, 0x4f), // green
    RGBColor(0xb0, 0x7a, 0xa1), // purple
    RGBColor(0x76, 0xb7, 0xb2), // teal
    RGBColor(0xed, 0xc9, 0x48), // yellow
    RGBColor(0x9c, 0x75, 0x5f), // brown
    RGBColor(0xff, 0x9d, 0xa7), // pink
];

pub(crate) const UNWRITTEN: RGBColor = RGBColor(0xd6, 0x27, 0x28);
pub(crate) const IDLE: RGBColor = RGBColor(0xe3, 0xe3, 0xe3);
pub(crate) const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
pub(crate) const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// Copies and kernels in the colours profilers use: HtoD green, DtoH red, kernels blue.
pub(crate) const HTOD: RGBColor = RGBColor(0x59, 0xa1, 0x4f);
pub(crate) const DTOH: RGBColor = RGBColor(0xe1, 0x57, 0x59);
pub(crate) const DTOD: RGBColor = RGBColor(0xb0, 0x7a, 0xa1);
pub(crate) const KERNEL: RGBColor = RGBColor(0x4e, 0x79, 0xa7);
pub(crate) const MEMSET: RGBColor = RGBColor(0xba, 0xb0, 0xac);

/// `c` moved towards white by `t` (0: unchanged, 1: white).
pub(crate) fn lighten(c: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let f = |v: u8| (v as f64 + (255.0 - v as f64) * t).round() as u8;
    RGBColor(f(c.0), f(c.1), f(c.2))
}

/// Draws a `width`×`height` figure into an SVG string.
pub(crate) fn render(width: u32, height: u32, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> super::Svg {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        // The SVG backend writes into memory and needs no font files: drawing cannot fail.
        root.fill(&WHITE).expect("drawing an SVG into a String");
        draw(&root).expect("drawing an SVG into a String");
        root.present().expect("finishing an SVG in a String");
    }
    super::Svg(out)
}

/// Text of `size` px in `color`, anchored at `pos`.
pub(crate) fn text(size: u32, color: RGBColor, pos: text_anchor::Pos) -> TextStyle<'static> {
    TextStyle { font: (FONT, size).into_font(), color: color.to_backend_color(), pos }
}

pub(crate) use plotters::style::text_anchor;
pub(crate) use text_anchor::{HPos, Pos, VPos};

/// Left-aligned, vertically centred text.
pub(crate) fn label(size: u32) -> TextStyle<'static> {
    text(size, INK, Pos::new(HPos::Left, VPos::Center))
}

/// Left-aligned grey text, for subtitles.
pub(crate) fn muted(size: u32) -> TextStyle<'static> {
    text(size, MUTED, Pos::new(HPos::Left, VPos::Center))
}

/// How many lines a legend of `entries` takes when wrapped into `width` px from x = `x0`.
pub(crate) fn legend_lines(entries: &[(RGBColor, String)], x0: i32, width: i32) -> i32 {
    let mut lines = 1;
    let mut x = x0;
    for (_, words) in entries {
        let w = entry_width(words);
        if x > x0 && x + w > width {
            lines += 1;
            x = x0;
        }
        x += w;
    }
    lines
}

/// Line height of a legend.
pub(crate) const LEGEND_LINE: i32 = 22;

/// A legend wrapped into lines of `width` px, starting at (`x0`, `y`) (the first line's middle).
pub(crate) fn legend(area: &Area<'_>, entries: &[(RGBColor, String)], x0: i32, y: i32, width: i32) -> DrawResult {
    let (mut x, mut y) = (x0, y);
    for (fill, words) in entries {
        if x > x0 && x + entry_width(words) > width {
            x = x0;
            y += LEGEND_LINE;
        }
        x = legend_entry(area, x, y, *fill, words)?;
    }
    Ok(())
}

fn entry_width(words: &str) -> i32 {
    17 + text_width(words, LABEL) + 18
}

/// A legend entry: a swatch then its words; returns the x after it.
pub(crate) fn legend_entry(
    area: &Area<'_>,
    x: i32,
    y: i32,
    fill: RGBColor,
    words: &str,
) -> Result<i32, DrawingAreaErrorKind<std::io::Error>> {
    area.draw(&Rectangle::new([(x, y - 6), (x + 12, y + 6)], fill.filled()))?;
    area.draw(&Rectangle::new([(x, y - 6), (x + 12, y + 6)], INK.stroke_width(1)))?;
    area.draw(&Text::new(words.to_string(), (x + 17, y), label(LABEL)))?;
    Ok(x + entry_width(words))
}

/// Roughly how wide `s` is at plotters' `size` in a sans-serif font (for layout, not
/// typesetting; a little generous, so that what is laid out to fit does).
pub(crate) fn text_width(s: &str, size: u32) -> i32 {
    (s.chars().count() as f64 * size as f64 * 0.48).ceil() as i32
}
