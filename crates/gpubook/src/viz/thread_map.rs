//! Which block and thread covers each element of a launch: predicted from the launch
//! configuration, or observed by running an instrumented twin of the kernel.

use super::cells::{Cell, Grid, Mark};
use super::style::{self, IDLE, PALETTE, UNWRITTEN, legend_entry, lighten, render};
use crate::gpu::{Gpu, GpuError, LaunchConfig, Result, Source};
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
        // -1 everywhere (all bits set), so what no thread wrote stays recognisable.
        let mut block_of = unsafe { stream.alloc::<i32>(n) }?;
        let mut thread_of = unsafe { stream.alloc::<i32>(n) }?;
        stream.memset_bytes(&mut block_of, 0xFF)?;
        stream.memset_bytes(&mut thread_of, 0xFF)?;
        let (rows_i, cols_i) = (to_i32(rows)?, to_i32(cols)?);
        let cfg = LaunchConfig { grid_dim: (grid.0, grid.1, 1), block_dim: (block.0, block.1, 1), shared_mem_bytes: 0 };
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut block_of).arg(&mut thread_of).arg(&rows_i).arg(&cols_i);
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
        let observed_on = Some(super::backend_label(gpu));
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
/// index), idle threads grey and hatched, unwritten elements red with a cross.
pub fn thread_map_svg(map: &ThreadMap) -> super::Svg {
    let grid = layout(map);
    let px = cell_px(grid.cols);
    let (left, top) = (48, 58);
    let legend_h = 40;
    let width = (left + grid.cols as i32 * px + 16).max(720) as u32;
    let height = (top + grid.rows as i32 * px + legend_h + 16) as u32;
    render(width, height, |area| {
        area.draw(&Text::new(title(map), (16, 22), style::label(18)))?;
        area.draw(&Text::new(subtitle(map), (16, 44), style::muted(13)))?;
        grid.draw(area, left, top, px)?;
        legend(area, map, 16, top + grid.rows as i32 * px + 26)
    })
}

fn title(map: &ThreadMap) -> String {
    let size = if map.shape.0 == 1 { format!("n = {}", map.shape.1) } else { format!("{} × {} matrix", map.shape.0, map.shape.1) };
    format!("{} over {size}", map.launch_text())
}

fn subtitle(map: &ThreadMap) -> String {
    let how = match &map.observed_on {
        Some(b) => format!("observed: each element shows the thread that wrote it, on {b}"),
        None => "predicted from the launch configuration".to_string(),
    };
    let threads = map.grid.0 as usize * map.grid.1 as usize * map.block.0 as usize * map.block.1 as usize;
    let mut s = format!("{how}; {threads} threads launched");
    if map.idle_threads() > 0 {
        s += &format!(", {} idle", map.idle_threads());
    }
    if map.unwritten() > 0 {
        s += &format!(", {} elements never written", map.unwritten());
    }
    s
}

/// Cells are sized so the figure is about as wide as a book's text column (700 px of cells): a
/// browser then shows it at its own size, and the text in it stays readable.
fn cell_px(cols: usize) -> i32 {
    (700 / cols.max(1) as i32).clamp(4, 30)
}

/// Cells for the map: a 2D map as it is, an array wrapped into rows of 32 or 64.
fn layout(map: &ThreadMap) -> Grid {
    let threads_per_block = (map.block.0 * map.block.1).max(1);
    let paint = |r: usize, c: usize| -> Cell {
        match map.owner(r, c) {
            Some(o) => {
                let block_id = o.block.0 as u64 + o.block.1 as u64 * map.grid.0 as u64;
                let hue = PALETTE[(o.block.0 as usize + 3 * o.block.1 as usize) % PALETTE.len()];
                let t = o.thread.0 + o.thread.1 * map.block.0;
                let shade = 0.6 * (1.0 - t as f64 / (threads_per_block.max(2) - 1) as f64);
                let idle = !map.in_data(r, c);
                Cell {
                    fill: if idle { IDLE } else { lighten(hue, shade) },
                    group: Some(block_id),
                    mark: if idle { Mark::Hatch } else { Mark::None },
                    text: Some(if map.block.1 == 1 { o.thread.0.to_string() } else { format!("{},{}", o.thread.0, o.thread.1) }),
                }
            }
            None if map.in_data(r, c) => Cell { fill: UNWRITTEN, group: None, mark: Mark::Cross, text: None },
            None => Cell { fill: WHITE, group: None, mark: Mark::None, text: None },
        }
    };
    let (rows, cols, cells, first): (usize, usize, Vec<Cell>, Vec<usize>) = if map.is_1d() {
        let n = map.extent.1;
        let per_row = n.min(if n <= 256 { 32 } else { 64 });
        let rows = n.div_ceil(per_row.max(1));
        (rows, per_row, (0..n).map(|i| paint(0, i)).collect(), (0..rows).map(|r| r * per_row).collect())
    } else {
        let (rows, cols) = map.extent;
        (rows, cols, (0..rows * cols).map(|i| paint(i / cols, i % cols)).collect(), (0..rows).collect())
    };
    let px = cell_px(cols);
    let mut cells = cells;
    // Thread numbers only where they fit and can be read.
    let fits = |c: &Cell| px >= 18 && c.text.as_ref().is_some_and(|t| style::text_width(t, (px * 6 / 10).clamp(8, 13) as u32) <= px - 2);
    for c in cells.iter_mut() {
        if !fits(c) {
            c.text = None;
        }
    }
    let every = if px >= 12 { 1 } else { 4 };
    let row_labels = first.iter().enumerate().map(|(r, f)| if r % every == 0 { f.to_string() } else { String::new() }).collect();
    Grid { rows, cols, cells, row_labels }
}

fn legend(area: &style::Area<'_>, map: &ThreadMap, x: i32, y: i32) -> style::DrawResult {
    let mut x = x;
    let blocks = (map.grid.0 * map.grid.1) as usize;
    for b in 0..blocks.min(4) {
        let (bx, by) = (b as u32 % map.grid.0, b as u32 / map.grid.0);
        let name = if map.grid.1 == 1 { format!("block {bx}") } else { format!("block ({bx},{by})") };
        x = legend_entry(area, x, y, PALETTE[(bx as usize + 3 * by as usize) % PALETTE.len()], &name)?;
    }
    if blocks > 4 {
        area.draw(&Text::new("…", (x - 10, y), style::label(13)))?;
        x += 14;
    }
    let shade = format!("light → dark: thread 0 → {}", map.block.0 * map.block.1 - 1);
    area.draw(&Text::new(shade.clone(), (x, y), style::label(13)))?;
    x += style::text_width(&shade, 13) + 18;
    if map.idle_threads() > 0 {
        x = legend_entry(area, x, y, IDLE, "idle thread (past the end)")?;
    }
    if map.unwritten() > 0 {
        legend_entry(area, x, y, UNWRITTEN, "never written")?;
    }
    Ok(())
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
