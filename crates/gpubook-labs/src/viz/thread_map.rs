//! Which block and thread covers each element of a launch: predicted from the launch
//! configuration, or observed by running an instrumented twin of the kernel.

use super::cells::{Cell, Grid, Mark};
use super::style::{self, IDLE, PALETTE, UNWRITTEN, lighten, render};
use gpubook::gpu::{Gpu, GpuError, LaunchConfig, Result, Source};
use plotters::prelude::*;
use std::fmt;

/// An indexing pattern with an instrumented kernel in `kernels/viz/thread_map.cu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n)`: vector add's indexing.
    OnePerThread,
    /// A grid-stride loop over `n` elements.
    GridStride,
    /// `(row, col)` from a 2D grid of 2D blocks over a `rows × cols` matrix.
    Matrix2d,
}

impl Pattern {
    pub const ALL: [Pattern; 3] = [Pattern::OnePerThread, Pattern::GridStride, Pattern::Matrix2d];

    /// The kernel's name in `kernels/viz/thread_map.cu`.
    pub fn kernel(self) -> &'static str {
        match self {
            Pattern::OnePerThread => "one_per_thread",
            Pattern::GridStride => "grid_stride",
            Pattern::Matrix2d => "matrix_2d",
        }
    }

    /// By kernel name; `vector_add` is the one-element-per-thread pattern.
    pub fn from_name(name: &str) -> Option<Pattern> {
        match name {
            "vector_add" => Some(Pattern::OnePerThread),
            _ => Pattern::ALL.into_iter().find(|p| p.kernel() == name.replace('-', "_")),
        }
    }

    pub fn is_2d(self) -> bool {
        self == Pattern::Matrix2d
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel())
    }
}

/// The block and thread (x, y) that wrote an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub block: (u32, u32),
    pub thread: (u32, u32),
}

/// Who covers each element. Elements are `shape` (rows, cols), `(1, n)` for an array; the map
/// spans `extent` ⊇ `shape`, since a launch may have threads past the data (idle ones).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadMap {
    pub kernel: String,
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shape: (usize, usize),
    pub extent: (usize, usize),
    /// Row-major over `extent`.
    pub owners: Vec<Option<Owner>>,
    /// The backend a recorded map ran on; `None` for a prediction.
    pub observed_on: Option<String>,
}

impl ThreadMap {
    /// What one-element-per-thread indexing (`blockIdx * blockDim + threadIdx` in x, and in y for
    /// a 2D grid) gives for this launch: computed, nothing runs. The kernel is called `kernel`;
    /// set [`ThreadMap::kernel`] to name it.
    pub fn predict(shape: (usize, usize), grid: (u32, u32), block: (u32, u32)) -> ThreadMap {
        let span = ((grid.1 * block.1) as usize, (grid.0 * block.0) as usize);
        let extent = (shape.0.max(span.0), shape.1.max(span.1));
        let owners = (0..extent.0 * extent.1)
            .map(|i| {
                let (r, c) = (i / extent.1, i % extent.1);
                (r < span.0 && c < span.1).then(|| Owner {
                    block: ((c / block.0 as usize) as u32, (r / block.1 as usize) as u32),
                    thread: ((c % block.0 as usize) as u32, (r % block.1 as usize) as u32),
                })
            })
            .collect();
        ThreadMap { kernel: "kernel".into(), grid, block, shape, extent, owners, observed_on: None }
    }

    /// Runs `pattern`'s instrumented kernel on `gpu` and reads back who wrote each element.
    /// `shape` is `(1, n)` for the 1D patterns.
    pub fn record(gpu: &Gpu, pattern: Pattern, shape: (usize, usize), grid: (u32, u32), block: (u32, u32)) -> Result<ThreadMap> {
        let (rows, cols) = shape;
        let n = rows * cols;
        let stream = gpu.default_stream();
        let module = gpu.load_module(Source::library("viz/thread_map.cu"))?;
        let f = module.load_function(pattern.kernel())?;
        // SAFETY: set to -1 everywhere (all bits set) just below, before the kernel runs,
        // so what no thread wrote stays recognisable.
        let mut block_of = unsafe { stream.alloc::<i32>(n) }?;
        // SAFETY: also set to -1 just below.
        let mut thread_of = unsafe { stream.alloc::<i32>(n) }?;
        stream.memset_bytes(&mut block_of, 0xFF)?;
        stream.memset_bytes(&mut thread_of, 0xFF)?;
        let (rows_i, cols_i) = (to_i32(rows)?, to_i32(cols)?);
        let cfg = LaunchConfig { grid_dim: (grid.0, grid.1, 1), block_dim: (block.0, block.1, 1), shared_mem_bytes: 0 };
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut block_of).arg(&mut thread_of).arg(&rows_i).arg(&cols_i);
        // SAFETY: block_of and thread_of hold rows × cols ints, and each pattern's guard
        // (i < cols, or row < rows && col < cols) keeps threads inside them.
        unsafe { launch.launch(cfg) }?;
        let (blocks, threads) = (stream.clone_dtoh(&block_of)?, stream.clone_dtoh(&thread_of)?);
        let owners = blocks
            .iter()
            .zip(&threads)
            .map(|(&b, &t)| {
                (b >= 0 && t >= 0)
                    .then(|| Owner { block: (b as u32 % grid.0, b as u32 / grid.0), thread: (t as u32 % block.0, t as u32 / block.0) })
            })
            .collect();
        let observed_on = Some(crate::backend::backend_label(gpu));
        Ok(ThreadMap { kernel: pattern.kernel().into(), grid, block, shape, extent: shape, owners, observed_on })
    }

    pub fn owner(&self, row: usize, col: usize) -> Option<Owner> {
        self.owners.get(row * self.extent.1 + col).copied().flatten()
    }

    fn in_data(&self, row: usize, col: usize) -> bool {
        row < self.shape.0 && col < self.shape.1
    }

    /// Elements of the data that no thread wrote.
    pub fn unwritten(&self) -> usize {
        self.cells().filter(|&(r, c, o)| self.in_data(r, c) && o.is_none()).count()
    }

    /// Threads that cover no element (past the end of the data).
    pub fn idle_threads(&self) -> usize {
        self.cells().filter(|&(r, c, o)| !self.in_data(r, c) && o.is_some()).count()
    }

    fn cells(&self) -> impl Iterator<Item = (usize, usize, Option<Owner>)> + '_ {
        self.owners.iter().enumerate().map(|(i, o)| (i / self.extent.1, i % self.extent.1, *o))
    }

    fn is_1d(&self) -> bool {
        self.extent.0 == 1 && self.grid.1 == 1 && self.block.1 == 1
    }

    /// `kernel<<<grid, block>>>` as CUDA C writes it.
    pub fn launch_text(&self) -> String {
        let dim = |d: (u32, u32)| {
            if d.1 == 1 { d.0.to_string() } else { format!("({}, {})", d.0, d.1) }
        };
        format!("{}<<<{}, {}>>>", self.kernel, dim(self.grid), dim(self.block))
    }
}

fn to_i32(v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| GpuError::Size(format!("{v} elements do not fit the kernel's int parameters")))
}

/// The map as a figure: one cell per element, coloured by block (shaded light to dark by thread
/// index), idle threads grey and hatched, unwritten elements red with a cross. Drawn for the
/// book's column ([`style::COLUMN`]), with the element indices along the edges, and every block
/// named: in the legend when each has a colour of its own, else on the map itself.
pub fn thread_map_svg(map: &ThreadMap) -> super::Svg {
    let grid = layout(map);
    let px = cell_px(grid.cols);
    let (left, top) = (64, 98);
    let width = style::COLUMN as i32;
    let entries = legend_entries(map);
    let legend_h = style::legend_lines(&entries, 16, width - 16) * style::LEGEND_LINE + 8;
    let height = (top + grid.rows as i32 * px + 16 + legend_h) as u32;
    render(width as u32, height, |area| {
        area.draw(&Text::new(title(map), (16, 20), style::label(style::TITLE)))?;
        area.draw(&Text::new(subtitle(map), (16, 40), style::muted(style::SMALL)))?;
        axes(area, map, &grid, left, top, px)?;
        grid.draw(area, left, top, px)?;
        if !names_in_legend(map) {
            name_blocks_on_map(area, map, &grid, left, top, px)?;
        }
        style::legend(area, &entries, 16, top + grid.rows as i32 * px + 16 + style::LEGEND_LINE / 2, width - 16)
    })
}

fn title(map: &ThreadMap) -> String {
    let size = if map.shape.0 == 1 { format!("n = {}", map.shape.1) } else { format!("{} × {} matrix", map.shape.0, map.shape.1) };
    format!("{} over {size}", map.launch_text())
}

fn subtitle(map: &ThreadMap) -> String {
    let how = match &map.observed_on {
        Some(b) => format!("observed on {b}: each element shows the thread that wrote it"),
        None => "predicted from the launch configuration".to_string(),
    };
    let threads = map.grid.0 as usize * map.grid.1 as usize * map.block.0 as usize * map.block.1 as usize;
    let mut s = format!("{how}; {threads} threads");
    if map.idle_threads() > 0 {
        s += &format!(", {} idle", map.idle_threads());
    }
    if map.unwritten() > 0 {
        s += &format!(", {} elements never written", map.unwritten());
    }
    s
}

/// Cells are sized so the map fills the column: the page then shows it at its own size.
fn cell_px(cols: usize) -> i32 {
    ((style::COLUMN as i32 - 64 - 16) / cols.max(1) as i32).clamp(4, 30)
}

/// The block a cell's colour stands for; a palette colour per block while they last.
fn hue(map: &ThreadMap, block: (u32, u32)) -> RGBColor {
    PALETTE[(block.0 as usize + map.grid.0 as usize * block.1 as usize) % PALETTE.len()]
}

/// Each block has a colour of its own (so the legend can name them all).
fn names_in_legend(map: &ThreadMap) -> bool {
    (map.grid.0 * map.grid.1) as usize <= PALETTE.len()
}

/// Cells for the map: a 2D map as it is, an array wrapped into rows of 32 or 64.
fn layout(map: &ThreadMap) -> Grid {
    let threads_per_block = (map.block.0 * map.block.1).max(1);
    let paint = |r: usize, c: usize| -> Cell {
        match map.owner(r, c) {
            Some(o) => {
                let block_id = o.block.0 as u64 + o.block.1 as u64 * map.grid.0 as u64;
                let t = o.thread.0 + o.thread.1 * map.block.0;
                let shade = 0.6 * (1.0 - t as f64 / (threads_per_block.max(2) - 1) as f64);
                let idle = !map.in_data(r, c);
                Cell {
                    fill: if idle { IDLE } else { lighten(hue(map, o.block), shade) },
                    group: Some(block_id),
                    mark: if idle { Mark::Hatch } else { Mark::None },
                    text: Some(if map.block.1 == 1 { o.thread.0.to_string() } else { format!("{},{}", o.thread.0, o.thread.1) }),
                }
            }
            None if map.in_data(r, c) => Cell { fill: UNWRITTEN, group: None, mark: Mark::Cross, text: None },
            None => Cell { fill: WHITE, group: None, mark: Mark::None, text: None },
        }
    };
    let (rows, cols, cells): (usize, usize, Vec<Cell>) = if map.is_1d() {
        let n = map.extent.1;
        let per_row = n.min(if n <= 256 { 32 } else { 64 });
        (n.div_ceil(per_row.max(1)), per_row, (0..n).map(|i| paint(0, i)).collect())
    } else {
        let (rows, cols) = map.extent;
        (rows, cols, (0..rows * cols).map(|i| paint(i / cols, i % cols)).collect())
    };
    let px = cell_px(cols);
    let mut cells = cells;
    // Thread numbers only where they fit at a readable size.
    let fits = |c: &Cell| c.text.as_ref().is_some_and(|t| px >= 18 && style::text_width(t, super::cells::cell_font(px)) <= px - 2);
    for c in cells.iter_mut() {
        if !fits(c) {
            c.text = None;
        }
    }
    Grid { rows, cols, cells }
}

/// Element indices along the edges: for an array, the first element of each row (left) and the
/// offset within a row (top); for a matrix, rows (left) and columns (top), at block boundaries.
fn axes(area: &style::Area<'_>, map: &ThreadMap, grid: &Grid, left: i32, top: i32, px: i32) -> style::DrawResult {
    let small = |h| style::text(style::SMALL, style::MUTED, style::Pos::new(h, style::VPos::Center));
    let (col_step, row_step, col_title, row_title) = if map.is_1d() {
        let step = [8, 16, 32].into_iter().find(|s| s * px as usize >= 40).unwrap_or(grid.cols);
        let rows = [1, 2, 4, 8].into_iter().find(|s| *s as i32 * px >= 16).unwrap_or(8);
        (step, rows, "offset in the row →".to_string(), "element".to_string())
    } else {
        let bx = map.block.0 as usize;
        let by = map.block.1 as usize;
        let col_step = (1..).map(|k| k * bx).find(|s| *s as i32 * px >= 30).unwrap_or(bx);
        let row_step = (1..).map(|k| k * by).find(|s| *s as i32 * px >= 16).unwrap_or(by);
        (col_step, row_step, "column →".to_string(), "row ↓".to_string())
    };
    area.draw(&Text::new(col_title, (left, top - 34), small(style::HPos::Left)))?;
    area.draw(&Text::new(row_title, (left - 6, top - 14), small(style::HPos::Right)))?;
    for c in (0..grid.cols).step_by(col_step.max(1)) {
        let x = left + c as i32 * px;
        let label = if map.is_1d() { format!("+{c}") } else { c.to_string() };
        area.draw(&Text::new(label, (x + 1, top - 12), small(style::HPos::Left)))?;
        area.draw(&PathElement::new(vec![(x, top - 5), (x, top)], style::MUTED))?;
    }
    for r in (0..grid.rows).step_by(row_step.max(1)) {
        let y = top + r as i32 * px + px / 2;
        let label = if map.is_1d() { (r * grid.cols).to_string() } else { r.to_string() };
        area.draw(&Text::new(label, (left - 6, y), small(style::HPos::Right)))?;
    }
    Ok(())
}

/// Block names at the middle of each block's cells, on a white ground, where they fit; blocks
/// whose cells are not all together (a grid-stride loop) are named by the legend instead.
fn name_blocks_on_map(area: &style::Area<'_>, map: &ThreadMap, grid: &Grid, left: i32, top: i32, px: i32) -> style::DrawResult {
    use std::collections::BTreeMap;
    let mut spans: BTreeMap<u64, (usize, usize, usize, usize)> = BTreeMap::new();
    for (i, cell) in grid.cells.iter().enumerate() {
        if let Some(g) = cell.group {
            let (r, c) = (i / grid.cols, i % grid.cols);
            let e = spans.entry(g).or_insert((r, c, r, c));
            *e = (e.0.min(r), e.1.min(c), e.2.max(r), e.3.max(c));
        }
    }
    for (g, (r0, c0, r1, c1)) in spans {
        let (bx, by) = ((g % map.grid.0 as u64) as u32, (g / map.grid.0 as u64) as u32);
        let name = if map.grid.1 == 1 && map.block.1 == 1 { format!("block {bx}") } else { format!("block ({bx},{by})") };
        let (w, h) = (((c1 - c0 + 1) as i32) * px, ((r1 - r0 + 1) as i32) * px);
        let tw = style::text_width(&name, style::SMALL) + 8;
        if tw > w || h < 18 {
            continue;
        }
        let (cx, cy) = (left + c0 as i32 * px + w / 2, top + r0 as i32 * px + h / 2);
        area.draw(&Rectangle::new([(cx - tw / 2, cy - 9), (cx + tw / 2, cy + 9)], WHITE.mix(0.85).filled()))?;
        let style = style::text(style::SMALL, style::INK, style::Pos::new(style::HPos::Center, style::VPos::Center));
        area.draw(&Text::new(name, (cx, cy), style))?;
    }
    Ok(())
}

/// The legend: every block by colour when each has its own (else they are named on the map),
/// what the shades mean, idle threads and unwritten elements.
fn legend_entries(map: &ThreadMap) -> Vec<(RGBColor, String)> {
    let mut entries = Vec::new();
    if names_in_legend(map) {
        for by in 0..map.grid.1 {
            for bx in 0..map.grid.0 {
                let name = if map.grid.1 == 1 { format!("block {bx}") } else { format!("block ({bx},{by})") };
                entries.push((hue(map, (bx, by)), name));
            }
        }
    }
    let last = map.block.0 * map.block.1 - 1;
    entries.push((lighten(style::INK, 0.55), format!("light → dark: thread 0 → {last} of its block")));
    if map.idle_threads() > 0 {
        entries.push((IDLE, "idle thread (past the end)".to_string()));
    }
    if map.unwritten() > 0 {
        entries.push((UNWRITTEN, "never written".to_string()));
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_covers_n_and_counts_idle_threads() {
        let m = ThreadMap::predict((1, 1000), (4, 1), (256, 1));
        assert_eq!(m.extent, (1, 1024));
        assert_eq!(m.idle_threads(), 24);
        assert_eq!(m.unwritten(), 0);
        assert_eq!(m.owner(0, 999), Some(Owner { block: (3, 0), thread: (231, 0) }));
        assert_eq!(m.launch_text(), "kernel<<<4, 256>>>");
    }

    #[test]
    fn too_small_a_grid_leaves_elements_unwritten() {
        let m = ThreadMap::predict((1, 600), (2, 1), (256, 1));
        assert_eq!(m.unwritten(), 88);
        assert_eq!(m.idle_threads(), 0);
    }

    #[test]
    fn a_2d_prediction_pads_both_edges() {
        let m = ThreadMap::predict((5, 7), (2, 2), (4, 4));
        assert_eq!(m.extent, (8, 8));
        assert_eq!(m.idle_threads(), 64 - 35);
        assert_eq!(m.owner(4, 6), Some(Owner { block: (1, 1), thread: (2, 0) }));
        assert_eq!(m.launch_text(), "kernel<<<(2, 2), (4, 4)>>>");
    }

    #[test]
    fn the_figure_names_the_launch_and_its_idle_threads() {
        let svg = thread_map_svg(&ThreadMap::predict((1, 1000), (4, 1), (256, 1)));
        assert!(svg.as_str().starts_with("<svg"));
        assert!(svg.as_str().contains("kernel&lt;&lt;&lt;4, 256&gt;&gt;&gt; over n = 1000"), "{}", &svg.as_str()[..600]);
        assert!(svg.as_str().contains("24 idle"));
    }
}
