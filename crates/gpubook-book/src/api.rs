//! The API reference: the library's rustdoc (gpubook, and the crates it re-exports as
//! `gpubook::sim` and `gpubook::emu`), copied into the book as `api/`, and `{{#api PATH}}`
//! markers that link a page to an item of it.
//!
//! `cargo doc` makes the rustdoc; CI runs it before the book (scripts/ci/book.sh), and so can
//! anyone (`cargo doc --no-deps -p gpubook -p gpubook-sim -p gpubook-emu -p gpubook-cudac -p gpubook-labs`). The book does not run
//! cargo itself: `gpubook book` is often run *by* cargo, and rustdoc takes minutes the first
//! time. Without the rustdoc, a marker shows the item's name without a link, and the build's
//! report says the reference is missing.

use super::markers;
use anyhow::{Context, anyhow, bail};
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::{Path, PathBuf};

/// The crates whose rustdoc the book carries.
pub const CRATES: &[&str] = &["gpubook", "gpubook_sim", "gpubook_emu", "gpubook_cudac", "gpubook_labs"];

/// The command that makes the rustdoc the book copies.
pub const DOC_COMMAND: &str = "cargo doc --no-deps -p gpubook -p gpubook-sim -p gpubook-emu -p gpubook-cudac -p gpubook-labs";

/// Copies the rustdoc in `doc` (target/doc) into `dest`/api, leaving out other crates' docs.
/// Returns false, copying nothing, when `doc` has no gpubook docs.
pub fn copy(doc: &Path, dest: &Path) -> anyhow::Result<bool> {
    if !doc.join("gpubook/index.html").is_file() {
        return Ok(false);
    }
    let to = dest.join("api");
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(doc).with_context(|| format!("reading {}", doc.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Another crate's documentation (with `cargo doc` without --no-deps): not ours to carry.
        let other_crate = path.join("all.html").is_file() && !CRATES.contains(&name);
        if !other_crate {
            copy_tree(&path, &to.join(name))?;
        }
    }
    Ok(true)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
    } else {
        std::fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    }
    Ok(())
}

/// `{{#api gpubook_sim::Op}}` → a link to `Op`'s page in the reference (or the name alone when
/// the reference is not built); `text="..."` sets the words.
pub struct ApiLinks {
    /// target/doc, where `cargo doc` wrote the rustdoc (`None`: not built).
    doc: Option<PathBuf>,
}

impl ApiLinks {
    pub const NAME: &'static str = "gpubook-api";

    pub fn new(doc: &Path) -> Self {
        ApiLinks { doc: doc.join("gpubook/index.html").is_file().then(|| doc.to_path_buf()) }
    }
}

impl Preprocessor for ApiLinks {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let mut errors = Vec::new();
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let Some(path) = ch.path.clone() else { return };
            let depth = path.components().count().saturating_sub(1);
            let up = "../".repeat(depth);
            let found = match markers::find(&ch.content, &["api"]) {
                Ok(m) => m,
                Err(e) => return errors.push(e),
            };
            let rendered = markers::replace(&ch.content, &found, |m| {
                m.args.only(1, &["text"])?;
                let item = m.args.positional(0).ok_or_else(|| anyhow!("names no item (`{{{{#api gpubook_sim::Op}}}}`)"))?;
                let words =
                    m.args.raw("text").map(str::to_string).unwrap_or_else(|| format!("`{}`", item.rsplit("::").next().unwrap_or(item)));
                match &self.doc {
                    None => Ok(words),
                    Some(doc) => Ok(format!("[{words}]({up}api/{})", page_of(doc, item)?)),
                }
            });
            match rendered {
                Ok(c) => ch.content = c,
                Err(es) => errors.extend(es.into_iter().map(|e| e.context(format!("book/src/{}", path.display())))),
            }
        });
        if let Some(all) = errors.into_iter().map(|e| format!("{e:#}")).reduce(|a, b| a + "\n" + &b) {
            bail!("{all}");
        }
        Ok(book)
    }
}

/// The rustdoc page of `item` (`gpubook_sim::Op`, `gpubook::chunk_pair`), relative to the doc
/// root: a module's `index.html`, or the item's `struct.`/`enum.`/... page.
fn page_of(doc: &Path, item: &str) -> anyhow::Result<String> {
    let parts: Vec<&str> = item.split("::").collect();
    if !CRATES.contains(&parts[0]) {
        bail!("`{item}`: the reference has the crates {}", CRATES.join(", "));
    }
    let module = parts.join("/") + "/index.html";
    if doc.join(&module).is_file() {
        return Ok(module);
    }
    let (name, dir) = parts.split_last().expect("split gives one part at least");
    let dir = dir.join("/");
    const KINDS: [&str; 8] = ["struct", "enum", "trait", "fn", "type", "constant", "macro", "static"];
    for kind in KINDS {
        let page = format!("{dir}/{kind}.{name}.html");
        if doc.join(&page).is_file() {
            return Ok(page);
        }
    }
    // A re-export (`pub use op::Op`) has its page where the item is defined: look below, and
    // take the page nearest the top (a module may show an item it re-exports as well).
    let mut found = Vec::new();
    find_pages(&doc.join(&dir), &KINDS.map(|k| format!("{k}.{name}.html")), &mut found);
    found.sort_by_key(|p| (p.components().count(), p.clone()));
    match found.as_slice() {
        [] => bail!("`{item}` has no page in the API reference ({}): is it public, and spelled as rustdoc writes it?", doc.display()),
        [first, second, ..] if first.components().count() == second.components().count() => {
            bail!("`{item}` is ambiguous in the API reference ({} and {}): give its module path", first.display(), second.display())
        }
        [first, ..] => Ok(first.strip_prefix(doc).unwrap_or(first).to_string_lossy().replace('\\', "/")),
    }
}

/// rustdoc leaves a small page that redirects to the real one where a re-export is.
fn is_redirect(page: &Path) -> bool {
    std::fs::read_to_string(page).is_ok_and(|t| t.len() < 1000 && t.contains("Redirecting to"))
}

fn find_pages(dir: &Path, names: &[String], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            find_pages(&path, names, out);
        } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| names.iter().any(|m| m == n)) && !is_redirect(&path) {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_find_their_rustdoc_pages() {
        let doc = std::env::temp_dir().join(format!("gpubook-api-{}", std::process::id()));
        std::fs::create_dir_all(doc.join("gpubook_sim")).unwrap();
        std::fs::create_dir_all(doc.join("gpubook/chunk_pair")).unwrap();
        std::fs::create_dir_all(doc.join("gpubook_sim/costs")).unwrap();
        std::fs::write(doc.join("gpubook_sim/enum.Op.html"), "").unwrap();
        std::fs::write(doc.join("gpubook_sim/costs/struct.Costs.html"), "").unwrap();
        std::fs::write(doc.join("gpubook/chunk_pair/index.html"), "").unwrap();
        assert_eq!(page_of(&doc, "gpubook_sim::Op").unwrap(), "gpubook_sim/enum.Op.html");
        assert_eq!(page_of(&doc, "gpubook_sim::Costs").unwrap(), "gpubook_sim/costs/struct.Costs.html");
        assert_eq!(page_of(&doc, "gpubook::chunk_pair").unwrap(), "gpubook/chunk_pair/index.html");
        assert!(page_of(&doc, "gpubook_sim::Nope").unwrap_err().to_string().contains("no page"));
        assert!(page_of(&doc, "serde::Value").is_err());
        std::fs::remove_dir_all(&doc).unwrap();
    }
}
