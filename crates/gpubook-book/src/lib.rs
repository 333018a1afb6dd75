//! The book, built in-process: mdbook 0.5's driver with our preprocessors, then a link check.
//!
//! ```text
//! book/src ─► include check ─► exercise boxes ─► figures and runs ─► notebook pages
//!             (files, anchors,  (exercises.toml,  (gpubook_labs::viz,      (target/notebooks,
//!              no answers)       the stubs)        book/recorded)      executed by CI)
//!          ─► mdbook's links ─► index ─► code reflowed to the column ─► HTML in target/book
//!             ({{#include}})                                            ─► link check
//! ```
//!
//! Our preprocessors run before mdbook's `links`, so `\{{#figure ...}}` stays escaped the way
//! `\{{#include ...}}` does (links removes the backslash afterwards).

mod api;
mod cache;
mod ep_outputs;
mod exercises;
mod figures;
mod guard;
mod includes;
mod links;
mod log;
mod markers;
mod notebooks;
mod outputs;
mod play;
mod playground;
mod recorded;
mod serve;
mod signatures;
mod summary;
mod wrap;

pub use figures::FigureStats;
pub use links::Broken;
pub use play::Listing;
pub use serve::serve;

use anyhow::{Context, bail};
use gpubook::sync::lock;
use gpubook_course::catalog::Catalog;
use mdbook_driver::MDBook;
use mdbook_driver::book::BookItem;
use mdbook_driver::builtin_preprocessors::{IndexPreprocessor, LinkPreprocessor};
use mdbook_driver::config::Config;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where a build reads and writes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace root (with `exercises.toml` and `book/`).
    pub root: PathBuf,
    /// The HTML goes here.
    pub dest: PathBuf,
    /// Cached figure outputs.
    pub cache_dir: PathBuf,
    /// `false` runs every figure again (and refreshes the cache).
    pub use_cache: bool,
    /// The executed notebooks scripts/ci/notebooks.sh wrote (`target/notebooks`).
    pub notebooks: PathBuf,
    /// Where `cargo doc` writes the library's rustdoc (`target/doc`), copied into the book.
    pub api_docs: PathBuf,
    /// Run the `recorded=` markers on this machine's device and write their recordings here
    /// (`gpubook book --record DIR`, on a GPU machine), instead of reading book/recorded/.
    pub record: Option<PathBuf>,
    /// `gpubook` itself: it records the runnable listings' outputs (`{{#play}}`) and runs and
    /// grades for the served book. `None`: listings show no output and the server runs nothing.
    pub gpubook_exe: Option<PathBuf>,
}

impl Options {
    /// `target/book`, with the figure cache in `target/book-cache` (under `CARGO_TARGET_DIR` when
    /// that is set).
    pub fn new(root: &Path) -> Options {
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        let target = if target.is_absolute() { target } else { root.join(target) };
        Options {
            root: root.to_path_buf(),
            dest: target.join("book"),
            cache_dir: target.join("book-cache"),
            use_cache: true,
            record: None,
            notebooks: target.join("notebooks"),
            api_docs: target.join("doc"),
            gpubook_exe: None,
        }
    }
}

/// What a build did.
#[derive(Debug, Clone)]
pub struct Report {
    pub dest: PathBuf,
    pub pages: usize,
    pub figures: FigureStats,
    pub notebooks: notebooks::NotebookStats,
    /// The rustdoc was there and is in the book as `api/`.
    pub api: bool,
    /// Chapters whose pages are not written yet (drafts in SUMMARY.md).
    pub drafts: Vec<u32>,
    pub secs: f64,
    /// The runnable listings, for the served book.
    pub listings: Vec<Listing>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fig = &self.figures;
        write!(
            f,
            "built {} pages into {} in {:.2} s; figures and runs: {} made ({:.2} s), {} from the cache; internal links OK",
            self.pages,
            self.dest.display(),
            self.secs,
            fig.made,
            fig.making_secs,
            fig.cached
        )?;
        if let Some((marker, secs)) = &fig.slowest {
            write!(f, "\nslowest: {{{{#{marker}}}}} ({secs:.2} s)")?;
        }
        if self.api {
            write!(f, "\nAPI reference: in the book as api/")?;
        } else {
            write!(f, "\nAPI reference: not built, so not linked (`{}` makes it)", api::DOC_COMMAND)?;
        }
        let nb = &self.notebooks;
        write!(f, "\nnotebooks: {} shown with their outputs", nb.executed)?;
        if !nb.without_outputs.is_empty() {
            write!(f, "; without outputs (scripts/ci/notebooks.sh runs them): {}", nb.without_outputs.join(", "))?;
        }
        if !fig.not_recorded.is_empty() {
            write!(f, "\nnot recorded yet (scripts/gpu/extra-record-book.sh on a GPU): {}", fig.not_recorded.join(", "))?;
        }
        if !self.drafts.is_empty() {
            let list: Vec<String> = self.drafts.iter().map(u32::to_string).collect();
            write!(f, "\nnot written yet (drafts in SUMMARY.md): chapter {}", list.join(", "))?;
        }
        Ok(())
    }
}

/// Builds the book. Fails on a preprocessor error (an unknown exercise, a broken marker), on any
/// error mdbook reports (a missing `{{#include}}` file or anchor), and on a broken internal link.
pub fn build(opts: &Options) -> anyhow::Result<Report> {
    log::init();
    let started = Instant::now();
    let book_dir = opts.root.join("book");
    let catalog = Catalog::load(&opts.root)?;
    let summary_path = book_dir.join("src/SUMMARY.md");
    let summary_text = std::fs::read_to_string(&summary_path).with_context(|| format!("reading {}", summary_path.display()))?;
    let drafts = summary::check(&summary_text, &book_dir.join("src"), &catalog)?;

    let mut config = Config::from_disk(book_dir.join("book.toml")).context("reading book/book.toml")?;
    config.update_from_env()?;
    config.build.build_dir = opts.dest.clone();
    // A page SUMMARY.md lists but nobody wrote is an error, not an empty file made in book/src.
    config.build.create_missing = false;
    // We add mdbook's two default preprocessors ourselves, after ours (see the module docs).
    config.build.use_default_preprocessors = false;
    let mut book = MDBook::load_with_config(&book_dir, config).context("loading the book")?;

    let stats = Arc::new(Mutex::new(FigureStats::default()));
    let nb_stats = Arc::new(Mutex::new(notebooks::NotebookStats::default()));
    let cache = cache::Cache::new(opts.cache_dir.clone(), &opts.root, opts.use_cache);
    let listings = Arc::new(Mutex::new(Vec::new()));
    let exercise_listings = Arc::new(Mutex::new(Vec::new()));
    let play_cache = cache::Cache::new(opts.cache_dir.clone(), &opts.root, opts.use_cache);
    book.with_preprocessor(includes::IncludeCheck)
        .with_preprocessor(summary::Contents { summary: summary_text.clone(), catalog: catalog.clone(), drafts: drafts.clone() })
        .with_preprocessor(exercises::ExerciseBoxes::new(catalog.clone(), drafts.clone(), &opts.root, exercise_listings.clone()))
        .with_preprocessor(figures::Figures::new(cache, stats.clone(), &opts.root, opts.record.clone()))
        .with_preprocessor(play::Play::new(&opts.root, play_cache, opts.gpubook_exe.clone(), listings.clone()))
        .with_preprocessor(notebooks::Notebooks::new(catalog, drafts.clone(), &opts.root, opts.notebooks.clone(), nb_stats.clone()))
        .with_preprocessor(api::ApiLinks::new(&opts.api_docs))
        .with_preprocessor(LinkPreprocessor::new())
        .with_preprocessor(IndexPreprocessor::new())
        .with_preprocessor(wrap::CodeWrap);
    let pages = book.iter().filter(|item| matches!(item, BookItem::Chapter(ch) if ch.path.is_some())).count();

    let errors_before = log::errors();
    book.build().context("building the book")?;
    let errors = log::errors() - errors_before;
    if errors > 0 {
        bail!("mdbook reported {errors} error{} (the ERROR lines above)", if errors == 1 { "" } else { "s" });
    }
    let api = api::copy(&opts.api_docs, &opts.dest).context("copying the API reference")?;
    let broken = links::check(&opts.dest).context("checking links")?;
    if !broken.is_empty() {
        let list: Vec<String> = broken
            .iter()
            .map(|b| {
                format!("ERROR broken link in {}: `{}` ({})", b.page.strip_prefix(&opts.dest).unwrap_or(&b.page).display(), b.link, b.why)
            })
            .collect();
        bail!("{} broken internal link{}:\n{}", broken.len(), if broken.len() == 1 { "" } else { "s" }, list.join("\n"));
    }
    let figures = lock(&stats).clone();
    let notebooks = lock(&nb_stats).clone();
    let mut all = lock(&exercise_listings).clone();
    for l in lock(&listings).iter() {
        if all.iter().any(|o| o.id == l.id) {
            bail!("a runnable listing and an exercise are both called `{}`: give the listing another `id=`", l.id);
        }
        all.push(l.clone());
    }
    let listings = all;
    Ok(Report { dest: opts.dest.clone(), pages, figures, notebooks, api, drafts, secs: started.elapsed().as_secs_f64(), listings })
}
