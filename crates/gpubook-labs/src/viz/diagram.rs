//! Diagrams that explain an idea rather than show a run: the walk of a tiled matrix multiply,
//! a reduction tree, shared-memory banks, DeepEP's low-latency buffers between two ranks, the
//! combine's send buffer, and a DualPipe chunk pair with its weight gradients and pipeline
//! communication. Drawn for the book's column, like every figure here; `{{#figure diagram
//! NAME}}` puts one on a page.

use super::style::{self, HPos, INK, MUTED, PALETTE, Pos, VPos, lighten, render};
use super::{Svg, style::Area, style::DrawResult};
use plotters::prelude::*;

/// The diagrams `{{#figure diagram NAME}}` knows, in the order the chapters use them.
pub const NAMES: &[&str] = &["tiled-matmul", "reduction-tree", "banks", "ll-buffers", "combine-buffer", "chunk-pair-split"];

/// A diagram by name, with its caption.
pub fn draw(name: &str) -> Option<(Svg, &'static str)> {
    Some(match name {
        "tiled-matmul" => (
            tiled_matmul(),
            "One block of a tiled matrix multiply: the tile of C it computes, and the tiles of A and B it walks through, one step at a time",
        ),
        "reduction-tree" => {
            (reduction_tree(), "A block of 8 threads sums its 8 values in shared memory in log₂ 8 = 3 steps, with a barrier after each")
        }
        "banks" => (
            banks(),
            "Which bank each word of a 32 × 32 float tile falls in, without and with a spare column: the words a warp reads down a column",
        ),
        "ll-buffers" => (
            ll_buffers(),
            "Two ranks' low-latency operations over time: each operation uses one buffer, cleans the other, and sends its counts last",
        ),
        "combine-buffer" => {
            (combine_buffer(), "The combine's send buffer in this chapter's exercise, and in DeepEP v1.2.1's low-latency combine")
        }
        "chunk-pair-split" => (
            chunk_pair_split(),
            "A forward chunk and a backward chunk overlapped, with the backward split into input and weight gradients and the pipeline's own communication",
        ),
        _ => return None,
    })
}

// ---- drawing helpers -------------------------------------------------------------------------

const ORANGE: RGBColor = PALETTE[1];
const BLUE: RGBColor = PALETTE[0];
const GREEN: RGBColor = PALETTE[2];
const PURPLE: RGBColor = PALETTE[3];
const RED: RGBColor = style::UNWRITTEN;

fn rect(a: &Area<'_>, (x, y): (i32, i32), (w, h): (i32, i32), fill: RGBColor) -> DrawResult {
    a.draw(&Rectangle::new([(x, y), (x + w, y + h)], fill.filled()))?;
    a.draw(&Rectangle::new([(x, y), (x + w, y + h)], INK.mix(0.6).stroke_width(1)))
}

fn text(a: &Area<'_>, (x, y): (i32, i32), s: &str, size: u32, h: HPos) -> DrawResult {
    a.draw(&Text::new(s.to_string(), (x, y), style::text(size, INK, Pos::new(h, VPos::Center))))
}

fn text_in(a: &Area<'_>, (x, y): (i32, i32), s: &str, size: u32, color: RGBColor) -> DrawResult {
    a.draw(&Text::new(s.to_string(), (x, y), style::text(size, color, Pos::new(HPos::Center, VPos::Center))))
}

fn title(a: &Area<'_>, s: &str) -> DrawResult {
    text(a, (14, 18), s, style::TITLE, HPos::Left)
}

/// A line with an arrowhead at its end.
fn arrow(a: &Area<'_>, (x0, y0): (i32, i32), (x1, y1): (i32, i32), color: RGBColor) -> DrawResult {
    a.draw(&PathElement::new(vec![(x0, y0), (x1, y1)], color.stroke_width(2)))?;
    let (dx, dy) = ((x1 - x0) as f64, (y1 - y0) as f64);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / len, dy / len);
    let p = |along: f64, across: f64| ((x1 as f64 - ux * along - uy * across) as i32, (y1 as f64 - uy * along + ux * across) as i32);
    a.draw(&Polygon::new(vec![(x1, y1), p(9.0, 4.5), p(9.0, -4.5)], color.filled()))
}

fn dashed(a: &Area<'_>, (x0, y): (i32, i32), x1: i32, color: RGBColor) -> DrawResult {
    let mut x = x0;
    while x < x1 {
        a.draw(&PathElement::new(vec![(x, y), ((x + 6).min(x1), y)], color.stroke_width(1)))?;
        x += 10;
    }
    Ok(())
}

// ---- chapter 4 ------------------------------------------------------------------------------

/// A as 3 × 4 tiles, B as 4 × 3, C as 3 × 3; block (2, 1) computes C's tile at row 1, column 2.
fn tiled_matmul() -> Svg {
    const T: i32 = 44; // a tile, in px
    let (k, m, n) = (4, 3, 3);
    let (ax, bx) = (190, 190 + k * T + 28);
    let (by, ay) = (50, 50 + k * T + 28);
    let (row, col) = (1, 2);
    let bottom = ay + m * T;
    render(style::COLUMN, (bottom + 96) as u32, |a| {
        title(a, "Tiled matrix multiply: one block's walk along k")?;
        // B above C, A left of C, as C = A × B is drawn by hand.
        for t in 0..k {
            for j in 0..n {
                let on = j == col;
                rect(a, (bx + j * T, by + t * T), (T, T), if on { GREEN } else { lighten(GREEN, 0.82) })?;
                if on {
                    text_in(a, (bx + j * T + T / 2, by + t * T + T / 2), &format!("t = {t}"), style::SMALL, WHITE)?;
                }
            }
            for i in 0..m {
                let on = i == row;
                rect(a, (ax + t * T, ay + i * T), (T, T), if on { ORANGE } else { lighten(ORANGE, 0.8) })?;
                if on {
                    text_in(a, (ax + t * T + T / 2, ay + i * T + T / 2), &format!("t = {t}"), style::SMALL, WHITE)?;
                }
            }
        }
        for i in 0..m {
            for j in 0..n {
                let on = (i, j) == (row, col);
                rect(a, (bx + j * T, ay + i * T), (T, T), if on { BLUE } else { lighten(BLUE, 0.85) })?;
            }
        }
        text_in(a, (bx + col * T + T / 2, ay + row * T + T / 2), "C tile", style::SMALL, WHITE)?;
        text(a, (ax - 10, ay + m * T / 2), "A (m × k)", style::LABEL, HPos::Right)?;
        text(a, (bx - 10, by + k * T / 2), "B (k × n)", style::LABEL, HPos::Right)?;
        text(a, (bx + n * T + 10, ay + m * T / 2), "C (m × n)", style::LABEL, HPos::Left)?;
        let notes = [
            "Block (2, 1) computes the dark blue tile of C. At step t it loads A's tile t of its row band",
            "(orange) and B's tile t of its column band (green) into shared memory, each thread one element",
            "of each; waits; adds TILE products per thread; waits; and moves on to t + 1.",
        ];
        for (i, line) in notes.iter().enumerate() {
            text(a, (14, bottom + 26 + i as i32 * 21), line, style::SMALL, HPos::Left)?;
        }
        Ok(())
    })
}

/// Threads 0..8, values in partial[], strides 4, 2, 1.
fn reduction_tree() -> Svg {
    let vals = [3, 1, 7, 0, 4, 1, 6, 3];
    let (w, h, gap) = (54, 30, 34);
    let x0 = 164;
    let y0 = 62;
    let steps = [("partial[t] = x[i]", 8, 0), ("stride 4: t < 4", 4, 4), ("stride 2: t < 2", 2, 2), ("stride 1: t < 1", 1, 1)];
    render(style::COLUMN, (y0 + 4 * (h + gap) + 10) as u32, |a| {
        title(a, "A reduction tree in shared memory")?;
        for t in 0..8 {
            text(a, (x0 + t * w + w / 2, y0 - 14), &format!("thread {t}"), style::SMALL, HPos::Center)?;
        }
        let mut cur = vals.to_vec();
        for (row, (label, live, stride)) in steps.iter().enumerate() {
            let y = y0 + row as i32 * (h + gap);
            if *stride > 0 {
                let before = cur.clone();
                for t in 0..*live {
                    cur[t] = before[t] + before[t + stride];
                    // Arrows from the two values added, one step up.
                    let up = y - gap;
                    arrow(a, (x0 + (t + stride) as i32 * w + w / 2, up), (x0 + t as i32 * w + w / 2 + 6, y - 2), MUTED)?;
                    a.draw(&PathElement::new(
                        vec![(x0 + t as i32 * w + w / 2, up), (x0 + t as i32 * w + w / 2, y - 2)],
                        MUTED.stroke_width(2),
                    ))?;
                }
                dashed(a, (x0 - 150, y - gap / 2 - 4), x0 + 8 * w, RED)?;
                text(a, (x0 + 8 * w + 4, y - gap / 2 - 4), "__syncthreads()", style::SMALL, HPos::Left)?;
            }
            text(a, (x0 - 10, y + h / 2), label, style::SMALL, HPos::Right)?;
            for (t, value) in cur.iter().enumerate() {
                let active = t < *live;
                let fill = if active { lighten(BLUE, 0.1) } else { lighten(style::IDLE, 0.3) };
                rect(a, (x0 + t as i32 * w + 3, y), (w - 6, h), fill)?;
                if active {
                    text_in(a, (x0 + t as i32 * w + w / 2, y + h / 2), &value.to_string(), style::LABEL, WHITE)?;
                }
            }
        }
        Ok(())
    })
}

/// Banks of the first 6 rows of a 32 × 32 and a 32 × 33 float tile; column 0 highlighted.
fn banks() -> Svg {
    const C: i32 = 19;
    let (x0, rows) = (62, 6);
    let panel_h = 30 + rows * C + 26;
    render(style::COLUMN, (48 + 2 * panel_h + 10) as u32, |a| {
        title(a, "Shared-memory banks: word w is in bank w mod 32")?;
        for (p, (name, cols, verdict)) in [
            (
                "float tile[32][32]: a column is 32 words apart",
                32,
                "a warp reading column 0: 32 lanes, 1 bank, 32 accesses one after another",
            ),
            (
                "float tile[32][33]: a column is 33 words apart (grey: the spare column)",
                33,
                "a warp reading column 0: 32 lanes, 32 different banks, one access",
            ),
        ]
        .iter()
        .enumerate()
        {
            let y0 = 48 + p as i32 * panel_h;
            text(a, (14, y0), name, style::LABEL, HPos::Left)?;
            for r in 0..rows {
                let y = y0 + 14 + r * C;
                text(a, (x0 - 6, y + C / 2), &format!("row {r}"), style::SMALL, HPos::Right)?;
                for c in 0..*cols {
                    let bank = (r * cols + c) % 32;
                    let x = x0 + c * C;
                    let (fill, ink) = match (c, c == 32) {
                        (0, _) => (if *cols == 32 { RED } else { GREEN }, WHITE),
                        (_, true) => (style::IDLE, MUTED),
                        _ => (lighten(BLUE, 0.55 + 0.35 * (bank % 2) as f64), INK),
                    };
                    rect(a, (x, y), (C, C), fill)?;
                    if c < 32 {
                        text_in(a, (x + C / 2, y + C / 2), &bank.to_string(), style::SMALL, ink)?;
                    }
                }
            }
            let style = style::text(style::SMALL, if *cols == 32 { RED } else { GREEN }, Pos::new(HPos::Left, VPos::Center));
            a.draw(&Text::new(verdict.to_string(), (x0, y0 + 14 + rows * C + 13), style))?;
        }
        Ok(())
    })
}

// ---- chapter 8 ------------------------------------------------------------------------------

/// Rank 0 and a slower rank 1 through operations 0, 1, 2.
fn ll_buffers() -> Svg {
    // Times are in pixels along the lane; each op is (start, end of SEND, end); buffer = op % 2.
    let lanes = [
        (0, "rank 0", [(0, 46, 150), (150, 196, 305), (305, 351, 430)]),
        (1, "rank 1", [(30, 100, 230), (230, 276, 380), (380, 426, 470)]),
    ];
    let (x0, lane_h, y0) = (86, 46, 70);
    let ys = [y0, y0 + 150];
    let tx = |t: i32| x0 + t * 13 / 10;
    render(style::COLUMN, 408, |a| {
        title(a, "DeepEP's low-latency buffers, two ranks (rank 1 slower)")?;
        for (r, name, ops) in lanes {
            let y = ys[r];
            text(a, (x0 - 10, y + lane_h / 2), name, style::LABEL, HPos::Right)?;
            for (k, &(s, send_end, e)) in ops.iter().enumerate() {
                let buf = k % 2;
                let hue = if buf == 0 { BLUE } else { ORANGE };
                rect(a, (tx(s), y), (tx(send_end) - tx(s), lane_h), lighten(hue, 0.25))?;
                rect(a, (tx(send_end), y), (tx(e) - tx(send_end), lane_h), lighten(hue, 0.75))?;
                text_in(a, ((tx(s) + tx(send_end)) / 2, y + 14), "send", style::SMALL, WHITE)?;
                text_in(a, ((tx(s) + tx(send_end)) / 2, y + 32), &format!("op {k}"), style::SMALL, WHITE)?;
                if tx(e) - tx(send_end) > 110 {
                    text_in(a, ((tx(send_end) + tx(e)) / 2, y + 14), "recv: wait for counts", style::SMALL, INK)?;
                    text_in(a, ((tx(send_end) + tx(e)) / 2, y + 32), &format!("in buffer {buf}"), style::SMALL, INK)?;
                }
                // The cleaning of the next buffer, early in SEND.
                let above = if r == 0 { y - 10 } else { y + lane_h + 12 };
                text(a, (tx(s) + 2, above), &format!("clean buffer {}", 1 - buf), style::SMALL, HPos::Left)?;
            }
        }
        // Counts go out at the end of each SEND, into the peer's buffer of the same index.
        for (from, sends) in [(0usize, [46, 196]), (1, [100, 276])] {
            for (k, t) in sends.into_iter().enumerate() {
                let (y_from, y_to) = if from == 0 { (ys[0] + lane_h, ys[1]) } else { (ys[1], ys[0] + lane_h) };
                let color = if k == 0 { BLUE } else { ORANGE };
                arrow(a, (tx(t), y_from), (tx(t) + 24, y_to), color)?;
            }
        }
        let notes = [
            "Arrows: the counts (−n−1) an operation's SEND writes into the peer's buffer of the same index, after its cleaning.",
            "Rank 0's op 1 writes into rank 1's buffer 1 while rank 1 still reads buffer 0: rank 1 cleaned buffer 1",
            "in its op 0, before it sent the count rank 0 needed to finish op 0. Rank 0 cannot start op 2 without",
            "rank 1's op 1 count: a rank is at most one operation ahead, so two buffers are enough.",
        ];
        let legend = [(lighten(BLUE, 0.25), "an operation on buffer 0".to_string()), (lighten(ORANGE, 0.25), "on buffer 1".to_string())];
        style::legend(a, &legend, 14, 306, style::COLUMN as i32 - 14)?;
        for (i, n) in notes.iter().enumerate() {
            let style = style::text(style::SMALL, INK, Pos::new(HPos::Left, VPos::Center));
            a.draw(&Text::new(n.to_string(), (14, 334 + i as i32 * 19), style))?;
        }
        Ok(())
    })
}

// ---- chapter 9 ------------------------------------------------------------------------------

fn combine_buffer() -> Svg {
    let (x0, w, hdr) = (110, 560, 74);
    render(style::COLUMN, 398, |a| {
        title(a, "The send buffer of a combine: messages, and the view over their payloads")?;
        text(
            a,
            (14, 50),
            "This chapter's exercise: one message per row m, a 16-byte header, then hidden floats",
            style::SMALL,
            HPos::Left,
        )?;
        for m in 0..4 {
            let y = 64 + m * 30;
            text(a, (x0 - 8, y + 12), &format!("message {m}"), style::SMALL, HPos::Right)?;
            rect(a, (x0, y), (hdr, 24), lighten(PURPLE, 0.45))?;
            text_in(a, (x0 + hdr / 2, y + 12), "header", style::SMALL, INK)?;
            rect(a, (x0 + hdr, y), (w - hdr, 24), lighten(GREEN, 0.35))?;
            text_in(a, (x0 + hdr + (w - hdr) / 2, y + 12), &format!("payload = row {m} of the view"), style::SMALL, INK)?;
        }
        // The row stride: from one payload's start to the next.
        arrow(a, (x0 + hdr + 10, 64 + 3), (x0 + hdr + 10, 64 + 30 + 2), INK)?;
        let notes = [
            "The payloads form a matrix of rows × hidden floats, starting 16 bytes in, each row one",
            "message (header and payload) after the one before it (the arrow): a strided 2-D view steps",
            "over the headers. The header holds the source token, k, the gate weight and the expert;",
            "the combine reads the weight from it.",
        ];
        for (i, n) in notes.iter().enumerate() {
            text(a, (14, 200 + i as i32 * 19), n, style::SMALL, HPos::Left)?;
        }
        let y2 = 292;
        text(a, (14, y2), "DeepEP v1.2.1, bf16, no header: a [E/R, R·T, H] view with a row stride of H + H/64", style::SMALL, HPos::Left)?;
        for m in 0..2 {
            let y = y2 + 14 + m * 30;
            text(a, (x0 - 8, y + 12), &format!("message {m}"), style::SMALL, HPos::Right)?;
            let scales = 120;
            rect(a, (x0, y), (w - scales, 24), lighten(GREEN, 0.35))?;
            text_in(a, (x0 + (w - scales) / 2, y + 12), "H bf16 values", style::SMALL, INK)?;
            rect(a, (x0 + w - scales, y), (scales, 24), style::IDLE)?;
            text_in(a, (x0 + w - scales / 2, y + 12), "H/64: scales", style::SMALL, INK)?;
        }
        Ok(())
    })
}

// ---- chapter 11 -----------------------------------------------------------------------------

/// The book's arrangement of one chunk pair with W split off and PP sends; widths are made up
/// (computation and communication about 1:1, as the report says of DeepSeek-V3).
fn chunk_pair_split() -> Svg {
    // (label, start, end, colour)
    let fwd = lighten(ORANGE, 0.15);
    let bwd = lighten(GREEN, 0.15);
    let wgt = lighten(BLUE, 0.15);
    let pp = lighten(PURPLE, 0.15);
    let compute = [
        ("ATTN(F)", 0, 60, fwd),
        ("MLP(B)", 60, 130, bwd),
        ("MLP(W)", 130, 175, wgt),
        ("MLP(F)", 175, 245, fwd),
        ("ATTN(B)", 245, 305, bwd),
        ("ATTN(W)", 305, 345, wgt),
    ];
    let comm = [
        ("COMBINE(B)", 0, 58, bwd),
        ("DISPATCH(F)", 62, 125, fwd),
        ("DISPATCH(B)", 178, 240, bwd),
        ("COMBINE(F)", 248, 305, fwd),
        ("PP", 308, 345, pp),
    ];
    let (x0, scale) = (136, 1.6);
    let x = |t: i32| x0 + (t as f64 * scale) as i32;
    render(style::COLUMN, 330, |a| {
        title(a, "One chunk pair: backward split into input (B) and weight (W) gradients")?;
        for (row, (name, items)) in [("computation", &compute[..]), ("communication", &comm[..])].iter().enumerate() {
            let y = 56 + row as i32 * 56;
            text(a, (x0 - 10, y + 18), name, style::LABEL, HPos::Right)?;
            for (label, s, e, c) in items.iter() {
                rect(a, (x(*s), y), (x(*e) - x(*s), 36), *c)?;
                text_in(a, ((x(*s) + x(*e)) / 2, y + 18), label, style::SMALL, WHITE)?;
            }
        }
        let legend: Vec<(RGBColor, String)> = vec![
            (fwd, "forward chunk".into()),
            (bwd, "backward: input gradient".into()),
            (wgt, "backward: weight gradient".into()),
            (pp, "PP: pipeline communication (sends to the next and previous stage)".into()),
        ];
        style::legend(a, &legend, 14, 184, style::COLUMN as i32 - 14)?;
        let notes = [
            "Each communication runs beside a computation of the other chunk. The weight gradients, which",
            "nobody waits for, fill the time the last communications need; the pair's own PP sends (its",
            "forward output, its input gradient) go out while ATTN(W) runs. The book's arrangement, after",
            "the report's Figure 4, whose order and SM split DeepSeek tuned by hand.",
        ];
        for (i, n) in notes.iter().enumerate() {
            let style = style::text(style::SMALL, INK, Pos::new(HPos::Left, VPos::Center));
            a.draw(&Text::new(n.to_string(), (14, 248 + i as i32 * 19), style))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_diagram_draws() {
        for name in NAMES {
            let (svg, caption) = draw(name).unwrap_or_else(|| panic!("{name}"));
            assert!(svg.as_str().starts_with("<svg width=\"720\""), "{name}");
            assert!(!caption.is_empty());
        }
        assert!(draw("spiral").is_none());
    }

    #[test]
    fn the_bank_diagram_puts_a_column_in_one_bank_then_in_all() {
        let svg = banks().0;
        assert!(svg.contains("32 lanes, 1 bank") && svg.contains("32 different banks"));
    }
}
