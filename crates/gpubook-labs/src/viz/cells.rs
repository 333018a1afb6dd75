//! A grid of coloured cells with outlines around groups: the drawing under the thread maps.
//! Each cell is one element; a group (a block) gets a darker border wherever its neighbour
//! belongs to another group, so blocks stand out whatever their shape.

use super::style::{Area, DrawResult, HPos, INK, Pos, VPos, text};
use plotters::prelude::*;

/// The size of the numbers in cells of `px`.
pub(crate) fn cell_font(px: i32) -> u32 {
    ((px * 6 / 10) as u32).clamp(super::style::SMALL, super::style::LABEL)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    None,
    /// A diagonal stroke: a thread that ran but had no element.
    Hatch,
    /// A cross: an element nobody wrote.
    Cross,
}

#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub fill: RGBColor,
    /// Cells of one group (block) share a border; `None` never joins a group.
    pub group: Option<u64>,
    pub mark: Mark,
    pub text: Option<String>,
}

/// `rows` × `cols` cells (row-major; missing ones at the end are left blank).
pub(crate) struct Grid {
    pub rows: usize,
    pub cols: usize,
    pub cells: Vec<Cell>,
}

impl Grid {
    fn at(&self, r: usize, c: usize) -> Option<&Cell> {
        if r < self.rows && c < self.cols { self.cells.get(r * self.cols + c) } else { None }
    }

    /// Draws the grid with its top-left corner at `(x, y)` and `px`-pixel cells.
    pub fn draw(&self, area: &Area<'_>, x: i32, y: i32, px: i32) -> DrawResult {
        let font = cell_font(px);
        for r in 0..self.rows {
            for c in 0..self.cols {
                let Some(cell) = self.at(r, c) else { continue };
                let (x0, y0) = (x + c as i32 * px, y + r as i32 * px);
                let (x1, y1) = (x0 + px, y0 + px);
                area.draw(&Rectangle::new([(x0, y0), (x1, y1)], cell.fill.filled()))?;
                area.draw(&Rectangle::new([(x0, y0), (x1, y1)], WHITE.mix(0.7).stroke_width(1)))?;
                match cell.mark {
                    Mark::None => {}
                    Mark::Hatch => area.draw(&PathElement::new(vec![(x0 + 1, y1 - 1), (x1 - 1, y0 + 1)], INK.mix(0.45)))?,
                    Mark::Cross => {
                        let s = WHITE.stroke_width(if px >= 10 { 2 } else { 1 });
                        area.draw(&PathElement::new(vec![(x0 + 2, y0 + 2), (x1 - 2, y1 - 2)], s))?;
                        area.draw(&PathElement::new(vec![(x0 + 2, y1 - 2), (x1 - 2, y0 + 2)], s))?;
                    }
                }
                if let Some(t) = &cell.text {
                    let style = text(font, INK, Pos::new(HPos::Center, VPos::Center));
                    area.draw(&Text::new(t.clone(), ((x0 + x1) / 2, (y0 + y1) / 2), style))?;
                }
            }
        }
        self.draw_group_borders(area, x, y, px)
    }

    /// A 2-px line on every cell edge whose two sides are in different groups.
    fn draw_group_borders(&self, area: &Area<'_>, x: i32, y: i32, px: i32) -> DrawResult {
        let group = |r: usize, c: usize| self.at(r, c).and_then(|cell| cell.group);
        let line = INK.stroke_width(2);
        for r in 0..self.rows {
            for c in 0..self.cols {
                let Some(cell) = self.at(r, c) else { continue };
                let (x0, y0) = (x + c as i32 * px, y + r as i32 * px);
                let here = cell.group;
                if here.is_none() {
                    continue;
                }
                // Left and top edges: border when the neighbour differs (or there is none).
                if c == 0 || group(r, c - 1) != here {
                    area.draw(&PathElement::new(vec![(x0, y0), (x0, y0 + px)], line))?;
                }
                if r == 0 || group(r - 1, c) != here {
                    area.draw(&PathElement::new(vec![(x0, y0), (x0 + px, y0)], line))?;
                }
                if group(r, c + 1) != here {
                    area.draw(&PathElement::new(vec![(x0 + px, y0), (x0 + px, y0 + px)], line))?;
                }
                if group(r + 1, c) != here {
                    area.draw(&PathElement::new(vec![(x0, y0 + px), (x0 + px, y0 + px)], line))?;
                }
            }
        }
        Ok(())
    }
}
