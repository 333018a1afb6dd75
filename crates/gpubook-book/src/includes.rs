//! `{{#include path:anchor}}` checked before mdbook expands it: mdbook reports a missing file but
//! silently includes nothing for a missing anchor, so a renamed `ANCHOR:` would leave an empty
//! code block on the page. This fails the build instead, naming the page, the file and the anchor.
//!
//! It also keeps answers off the pages: an include from `solutions/` may show what the stubs
//! show too (given code, signatures), never a line of a `// SOLUTION` region. A page shows the
//! learner's stub from `exercises/`, or a worked example with a different kernel.

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
    let lines: Vec<&str> = text.lines().collect();
    let shown: std::ops::Range<usize> = if anchor.is_empty() {
        0..lines.len()
    } else if let Ok(from) = anchor.parse::<usize>() {
        // `path:from:to`, 1-based and inclusive, `to` optional.
        let to = rest.split(':').nth(1).and_then(|t| t.parse::<usize>().ok()).unwrap_or(lines.len());
        from.saturating_sub(1)..to.min(lines.len())
    } else {
        let at = |marker: &str| {
            lines.iter().position(|l| l.split(marker).nth(1).is_some_and(|after| after.split_whitespace().next() == Some(anchor)))
        };
        match (at("ANCHOR:"), at("ANCHOR_END:")) {
            (Some(a), Some(b)) => a + 1..b,
            (None, _) => return Err(anyhow!("{} has no `ANCHOR: {anchor}`", file.display())),
            (Some(_), None) => return Err(anyhow!("{} has `ANCHOR: {anchor}` but no `ANCHOR_END: {anchor}`", file.display())),
        }
    };
    if file.components().any(|c| c.as_os_str() == "solutions")
        && let Some(i) = shown.clone().find(|&i| !lines[i].contains("ANCHOR") && in_solution(&lines, i))
    {
        return Err(anyhow!(
            "shows an exercise's answer: line {} of {} is inside a `// SOLUTION` region. Include the stub from \
             exercises/ (`gpubook solution` shows the answer once the exercise passes), or show a different kernel",
            i + 1,
            file.display()
        ));
    }
    Ok(())
}

/// Whether line `i` lies between a `// SOLUTION` and its `// END SOLUTION`.
fn in_solution(lines: &[&str], i: usize) -> bool {
    let mut inside = false;
    for l in &lines[..=i] {
        match l.trim() {
            "// SOLUTION" => inside = true,
            "// END SOLUTION" => inside = false,
            _ => {}
        }
    }
    inside
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

    #[test]
    fn answers_stay_off_the_page() {
        let dir = std::env::temp_dir().join(format!("gpubook-includes-sol-{}", std::process::id())).join("solutions");
        std::fs::create_dir_all(&dir).unwrap();
        let kernel = "// ANCHOR: signature\nvoid f(int* x) {\n// ANCHOR_END: signature\n    // SOLUTION\n    // ANCHOR: body\n    x[0] = 1;\n    // ANCHOR_END: body\n    // STUB\n    // // TODO\n    // END SOLUTION\n}\n";
        std::fs::write(dir.join("k.cu"), kernel).unwrap();
        assert!(check(&dir, "k.cu:signature").is_ok());
        let e = check(&dir, "k.cu:body").unwrap_err().to_string();
        assert!(e.contains("shows an exercise's answer") && e.contains("line 6"), "{e}");
        assert!(check(&dir, "k.cu").is_err(), "the whole file holds the answer");
        assert!(check(&dir, "k.cu:1:3").is_ok());
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
