//! `{{#include path:anchor}}` checked before mdbook expands it: mdbook reports a missing file but
//! silently includes nothing for a missing anchor, so a renamed `ANCHOR:` would leave an empty
//! code block on the page. This fails the build instead, naming the page, the file and the anchor.

use super::markers;
use anyhow::{anyhow, bail};
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::Path;

pub struct IncludeCheck;

impl IncludeCheck {
    pub const NAME: &'static str = "gpubook-includes";
}

impl Preprocessor for IncludeCheck {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, ctx: &PreprocessorContext, book: Book) -> anyhow::Result<Book> {
        let src = ctx.root.join(&ctx.config.book.src);
        let mut errors = Vec::new();
        for item in book.iter() {
            let BookItem::Chapter(ch) = item else {
                continue;
            };
            let Some(page) = &ch.path else { continue };
            let dir = src.join(page.parent().unwrap_or(Path::new("")));
            let found = markers::find(&ch.content, &["include", "rustdoc_include"]).unwrap_or_default();
            for m in found {
                if let Err(e) = check(&dir, m.args.positional(0).unwrap_or("")) {
                    errors.push(format!("book/src/{}: {{{{#{}}}}}: {e}", page.display(), m.text));
                }
            }
        }
        if !errors.is_empty() {
            bail!("{}", errors.join("\n"));
        }
        Ok(book)
    }
}

/// `target` is `path`, `path:anchor` or `path:lines`, relative to the page's folder.
fn check(dir: &Path, target: &str) -> anyhow::Result<()> {
    let (path, rest) = target.split_once(':').unwrap_or((target, ""));
    let file = dir.join(path);
    let text = std::fs::read_to_string(&file).map_err(|e| anyhow!("cannot read {}: {e}", file.display()))?;
    let anchor = rest.split(':').next().unwrap_or("");
    if anchor.is_empty() || anchor.parse::<usize>().is_ok() {
        return Ok(()); // the whole file, or a range of lines
    }
    let has =
        |marker: &str| text.lines().any(|l| l.split(marker).nth(1).is_some_and(|after| after.split_whitespace().next() == Some(anchor)));
    match (has("ANCHOR:"), has("ANCHOR_END:")) {
        (true, true) => Ok(()),
        (false, _) => Err(anyhow!("{} has no `ANCHOR: {anchor}`", file.display())),
        (true, false) => Err(anyhow!("{} has `ANCHOR: {anchor}` but no `ANCHOR_END: {anchor}`", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_must_open_and_close() {
        let dir = std::env::temp_dir().join(format!("gpubook-includes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.cu"), "// ANCHOR: body\nint x;\n// ANCHOR_END: body\n// ANCHOR: open\n").unwrap();
        assert!(check(&dir, "k.cu").is_ok());
        assert!(check(&dir, "k.cu:body").is_ok());
        assert!(check(&dir, "k.cu:2:3").is_ok());
        assert!(check(&dir, "k.cu:bod").unwrap_err().to_string().contains("no `ANCHOR: bod`"));
        assert!(check(&dir, "k.cu:open").unwrap_err().to_string().contains("no `ANCHOR_END: open`"));
        assert!(check(&dir, "missing.cu:body").unwrap_err().to_string().contains("cannot read"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
