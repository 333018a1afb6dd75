//! Each chapter's notebook as a page of the book, under its chapter, with the outputs it printed
//! and drew when it last ran, so that a reader without Jupyter sees what it produces; and a link
//! to it at the top of the chapter.
//!
//! The notebooks are run by scripts/ci/notebooks.sh (evcxr, headless), which writes the executed
//! copies to `target/notebooks/`. The book takes an executed copy when its cells are those of
//! `notebooks/` today; otherwise (no run yet on this machine, or edited since) it shows the
//! notebook's cells with a note that says how to see the outputs. A copy whose run failed (an
//! error, a panic) fails the build: a notebook that does not run is not shown as if it did.

use anyhow::{Context, anyhow, bail};
use gpubook_course::catalog::Catalog;
use mdbook_preprocessor::book::{Book, BookItem, Chapter, SectionNumber};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How the notebooks went in a build: executed copies shown, and the ones without outputs.
#[derive(Debug, Default, Clone)]
pub struct NotebookStats {
    pub executed: usize,
    pub without_outputs: Vec<String>,
}

pub struct Notebooks {
    catalog: Catalog,
    drafts: Vec<u32>,
    /// `notebooks/` of the workspace.
    sources: PathBuf,
    /// Where scripts/ci/notebooks.sh writes the executed copies.
    executed: PathBuf,
    stats: Arc<Mutex<NotebookStats>>,
    /// The book has a set-up page with a `#the-notebooks` section to link to.
    setup: bool,
}

impl Notebooks {
    pub const NAME: &'static str = "gpubook-notebooks";

    pub fn new(catalog: Catalog, drafts: Vec<u32>, root: &Path, executed: PathBuf, stats: Arc<Mutex<NotebookStats>>) -> Self {
        let setup = std::fs::read_to_string(root.join("book/src/setup.md")).is_ok_and(|t| t.contains("## The notebooks"));
        Notebooks { catalog, drafts, sources: root.join("notebooks"), executed, stats, setup }
    }

    /// The notebook page for a chapter folder, and whether it shows outputs.
    fn page(&self, folder: &str) -> anyhow::Result<(String, bool)> {
        let name = format!("{folder}.ipynb");
        let source_path = self.sources.join(&name);
        let source = read(&source_path)
            .with_context(|| format!("chapter {folder} has no notebook: notebooks/{name} (every chapter has one, that mirrors it)"))?;
        let executed = read(&self.executed.join(&name)).ok();
        let (nb, note) = match executed {
            Some(run) if same_cells(&run, &source) => (run, None),
            Some(_) => (source, Some("it changed since scripts/ci/notebooks.sh last ran it on the machine that built this copy")),
            None => (source, Some("scripts/ci/notebooks.sh has not run it on the machine that built this copy")),
        };
        let md = render(&nb, &format!("notebooks/{name}"), note, self.setup).with_context(|| format!("notebooks/{name}"))?;
        Ok((md, note.is_none()))
    }
}

impl Preprocessor for Notebooks {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let mut errors = Vec::new();
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let Some(chapter) =
                self.catalog.chapters.iter().find(|c| ch.path.as_deref() == Some(Path::new(&format!("{}/index.md", c.folder))))
            else {
                return;
            };
            if self.drafts.contains(&chapter.number) {
                return;
            }
            match self.page(&chapter.folder) {
                Ok((md, executed)) => {
                    let mut stats = gpubook::sync::lock(&self.stats);
                    if executed {
                        stats.executed += 1;
                    } else {
                        stats.without_outputs.push(chapter.folder.clone());
                    }
                    ch.content = link_at_top(&ch.content, &chapter.folder, self.setup);
                    let mut parents = ch.parent_names.clone();
                    parents.push(ch.name.clone());
                    let mut page = Chapter::new("Notebook", md, format!("{}/notebook.md", chapter.folder), parents);
                    page.number = ch.number.as_ref().map(|n| {
                        let mut v: Vec<u32> = n.iter().copied().collect();
                        v.push(1);
                        SectionNumber::new(v)
                    });
                    ch.sub_items.push(BookItem::Chapter(page));
                }
                Err(e) => errors.push(e),
            }
        });
        if let Some(all) = errors.into_iter().map(|e| format!("{e:#}")).reduce(|a, b| a + "\n" + &b) {
            bail!("{all}");
        }
        Ok(book)
    }
}

fn read(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a notebook (JSON)", path.display()))
}

/// How to open a notebook in Jupyter, linking the set-up page when the book has one.
fn jupyter(setup: bool) -> &'static str {
    if setup { "open it in Jupyter ([set-up](../setup.md#the-notebooks))" } else { "open it in Jupyter" }
}

/// The chapter's page with a line under its title that links its notebook (Markdown links, so
/// that mdbook rewrites them for the print page too).
fn link_at_top(content: &str, folder: &str, setup: bool) -> String {
    let line = format!(
        "\n*This chapter's notebook, `notebooks/{folder}.ipynb`, runs its examples and draws its figures: \
         [read it with its outputs](notebook.md), or {}.*\n",
        jupyter(setup)
    );
    match content.find('\n') {
        Some(end) if content.starts_with("# ") => format!("{}{line}{}", &content[..=end], &content[end + 1..]),
        _ => format!("{line}\n{content}"),
    }
}

fn cells(nb: &Value) -> &[Value] {
    nb.get("cells").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// A cell's source as one string (Jupyter stores a list of lines, or a string).
fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The executed copy has the cells of the notebook in the repository (same kinds, same sources).
fn same_cells(run: &Value, source: &Value) -> bool {
    let key = |nb: &Value| -> Vec<(String, String)> {
        cells(nb).iter().map(|c| (text_of(c.get("cell_type")), text_of(c.get("source")).trim_end().to_string())).collect()
    };
    key(run) == key(source)
}

/// The notebook as a Markdown page: its Markdown cells as they are, its code cells as Rust
/// blocks, each followed by its outputs (text, and SVG figures inline).
pub fn render(nb: &Value, name: &str, no_outputs: Option<&str>, setup: bool) -> anyhow::Result<String> {
    let mut md = String::new();
    let mut titled = false;
    for (i, cell) in cells(nb).iter().enumerate() {
        let source = text_of(cell.get("source"));
        match cell.get("cell_type").and_then(Value::as_str) {
            Some("markdown") => {
                md += source.trim_end();
                md += "\n\n";
                if !titled {
                    titled = true;
                    md += &format!(
                        "*The notebook `{name}`, {}. To change and run it, {}.*\n\n",
                        match no_outputs {
                            None => "as it ran on the machine that built this book, outputs and figures included".to_string(),
                            Some(why) => format!("**without its outputs**: {why}"),
                        },
                        jupyter(setup)
                    );
                }
            }
            Some("code") => {
                md += &format!("```rust\n{}\n```\n\n", fence_safe(source.trim_end()));
                if no_outputs.is_none() {
                    for out in merged_streams(cell.get("outputs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])) {
                        md += &output(&out).with_context(|| format!("cell {}", i + 1))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(md)
}

/// The outputs of a cell with each run of printed text (evcxr sends a line at a time) joined
/// into one, so that a cell's printout reads as one block, not a block a line.
fn merged_streams(outs: &[Value]) -> Vec<Value> {
    let mut merged: Vec<Value> = Vec::new();
    for out in outs {
        let stream = |o: &Value| (o.get("output_type").and_then(Value::as_str) == Some("stream")).then(|| text_of(o.get("name")));
        if let (Some(last), Some(name)) = (merged.last_mut(), stream(out))
            && stream(last).as_deref() == Some(name.as_str())
        {
            let text = text_of(last.get("text")) + &text_of(out.get("text"));
            last["text"] = Value::String(text);
            continue;
        }
        merged.push(out.clone());
    }
    merged
}

/// One output of a code cell. An error, or a panic in printed text, fails the build.
fn output(out: &Value) -> anyhow::Result<String> {
    let kind = out.get("output_type").and_then(Value::as_str).unwrap_or("");
    if kind == "error" {
        let what = format!("{}: {}", text_of(out.get("ename")), text_of(out.get("evalue")));
        bail!("the notebook's run failed here ({what}): fix it, and run scripts/ci/notebooks.sh again");
    }
    let data = out.get("data");
    let text = match kind {
        "stream" => text_of(out.get("text")),
        _ => text_of(data.and_then(|d| d.get("text/plain"))),
    };
    if let Some(line) = text.lines().find(|l| l.contains("panicked at")) {
        return Err(anyhow!("the notebook's run panicked ({}): fix it, and run scripts/ci/notebooks.sh again", line.trim()));
    }
    if let Some(svg) = data.map(|d| text_of(d.get("image/svg+xml"))).filter(|s| s.contains("<svg")) {
        let svg: String = svg.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n");
        return Ok(format!("<figure class=\"gpubook-figure gpubook-nb-output\">\n{svg}\n</figure>\n\n"));
    }
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    Ok(format!("<div class=\"gpubook-nb-output\">\n\n```text\n{}\n```\n\n</div>\n\n", fence_safe(text.trim_end())))
}

/// Text that cannot close the fence it sits in.
fn fence_safe(s: &str) -> String {
    s.replace("```", "`\u{200b}``")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nb(outputs: Value) -> Value {
        serde_json::json!({"cells": [
            {"cell_type": "markdown", "source": ["# Chapter 9\n", "Words."]},
            {"cell_type": "code", "source": "let x = 1;\nx", "outputs": outputs},
        ]})
    }

    #[test]
    fn cells_and_outputs_become_a_page() {
        let n = nb(serde_json::json!([
            {"output_type": "stream", "name": "stdout", "text": ["device: emulator\n"]},
            {"output_type": "display_data", "data": {"image/svg+xml": "<svg width=\"10\">\n\n<rect/></svg>", "text/plain": "Svg"}},
        ]));
        let md = render(&n, "notebooks/ch09.ipynb", None, true).unwrap();
        assert!(md.starts_with("# Chapter 9\nWords.\n\n*The notebook `notebooks/ch09.ipynb`, as it ran"), "{md}");
        assert!(md.contains("```rust\nlet x = 1;\nx\n```"));
        assert!(md.contains("```text\ndevice: emulator\n```"));
        assert!(md.contains("<figure class=\"gpubook-figure gpubook-nb-output\">\n<svg width=\"10\">\n<rect/></svg>\n</figure>"));
        let bare = render(&n, "notebooks/ch09.ipynb", Some("not run here"), false).unwrap();
        assert!(bare.contains("**without its outputs**: not run here") && !bare.contains("device: emulator"));
    }

    #[test]
    fn printed_lines_read_as_one_block() {
        let n = nb(serde_json::json!([
            {"output_type": "stream", "name": "stdout", "text": "a\n"},
            {"output_type": "stream", "name": "stdout", "text": ["b\n"]},
        ]));
        let md = render(&n, "notebooks/ch08.ipynb", None, false).unwrap();
        assert!(md.contains("```text\na\nb\n```"), "{md}");
    }

    #[test]
    fn a_failed_run_fails_the_page() {
        let n =
            nb(serde_json::json!([{"output_type": "stream", "name": "stderr", "text": "thread 'main' panicked at src/lib.rs:1:1:\nboom"}]));
        assert!(format!("{:#}", render(&n, "x", None, true).unwrap_err()).contains("panicked"));
        let n = nb(serde_json::json!([{"output_type": "error", "ename": "Error", "evalue": "no such method", "traceback": []}]));
        assert!(format!("{:#}", render(&n, "x", None, true).unwrap_err()).contains("no such method"));
    }

    #[test]
    fn an_executed_copy_counts_only_with_the_same_cells() {
        let a = nb(serde_json::json!([]));
        let mut b = a.clone();
        assert!(same_cells(&a, &b));
        b["cells"][1]["source"] = Value::String("let x = 2;".into());
        assert!(!same_cells(&a, &b));
    }

    #[test]
    fn the_chapter_links_its_notebook_under_its_title() {
        let page = link_at_top("# Zero copy\n\nText.", "ch09-zero-copy", true);
        assert!(page.starts_with("# Zero copy\n\n*This chapter's notebook, `notebooks/ch09-zero-copy.ipynb`"), "{page}");
        assert!(page.contains("[read it with its outputs](notebook.md)") && page.contains("(../setup.md#the-notebooks)"));
    }
}
