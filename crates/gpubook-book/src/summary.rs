//! SUMMARY.md against exercises.toml: every `[[chapter]]` has a part in the table of contents, in
//! the catalog's order, with a link to its folder's `index.md` once that page exists, and a draft
//! entry (`- [Title]()`, shown greyed out) until then. SUMMARY.md stays a plain file mdbook reads;
//! this keeps it from drifting from the one list of chapters.

use super::markers;
use anyhow::bail;
use gpubook_course::catalog::Catalog;
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::Path;

/// Checks `summary` (the text of book/src/SUMMARY.md, whose folder is `src`) and returns the
/// numbers of the chapters that are still drafts.
pub fn check(summary: &str, src: &Path, catalog: &Catalog) -> anyhow::Result<Vec<u32>> {
    let mut problems = Vec::new();
    let mut drafts = Vec::new();
    let mut last: Option<(usize, u32)> = None;
    for ch in &catalog.chapters {
        let page = format!("{}/index.md", ch.folder);
        let written = src.join(&page).is_file();
        let link = summary.find(&format!("]({page})"));
        let draft = summary.find(&format!("[{}]()", ch.title));
        let at = match (link, draft, written) {
            (Some(at), _, true) => Some(at),
            (Some(at), _, false) => {
                problems.push(format!(
                    "chapter {} links {page}, which does not exist yet: write it, or make the entry a draft `- [{}]()`",
                    ch.number, ch.title
                ));
                Some(at)
            }
            (None, _, true) => {
                problems.push(format!("chapter {}: book/src/{page} exists but no entry links it: `- [{}]({page})`", ch.number, ch.title));
                None
            }
            (None, Some(at), false) => {
                drafts.push(ch.number);
                Some(at)
            }
            (None, None, false) => {
                problems.push(format!(
                    "chapter {} ({}) has no entry: `- [{}]({page})`, or the draft `- [{}]()` until the page is written",
                    ch.number, ch.title, ch.title, ch.title
                ));
                None
            }
        };
        if let Some(at) = at {
            if let Some((prev_at, prev)) = last
                && at < prev_at
            {
                problems.push(format!("chapter {} comes before chapter {prev}; exercises.toml has them the other way round", ch.number));
            }
            last = Some((at, ch.number));
        }
    }
    if !problems.is_empty() {
        bail!("book/src/SUMMARY.md does not match exercises.toml:\n  {}", problems.join("\n  "));
    }
    Ok(drafts)
}

/// The parts of SUMMARY.md (its `# ` headings) with the catalog chapters listed under each.
pub fn parts<'a>(summary: &str, catalog: &'a Catalog) -> Vec<(String, Vec<&'a gpubook_course::catalog::Chapter>)> {
    let mut parts: Vec<(String, Vec<&gpubook_course::catalog::Chapter>)> = Vec::new();
    for line in summary.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("# ").filter(|n| *n != "Summary") {
            parts.push((name.to_string(), Vec::new()));
        } else if let Some(part) = parts.last_mut() {
            let entry = catalog.chapters.iter().find(|c| {
                t.starts_with('-') && (t.contains(&format!("]({}/index.md)", c.folder)) || t.contains(&format!("[{}]()", c.title)))
            });
            if let Some(c) = entry {
                part.1.push(c);
            }
        }
    }
    parts
}

/// `{{#contents}}`: the book's parts and chapters as a table, from SUMMARY.md and the catalog,
/// so that the title page names the sidebar's parts and says which chapters are written.
pub struct Contents {
    pub summary: String,
    pub catalog: Catalog,
    pub drafts: Vec<u32>,
}

impl Contents {
    pub const NAME: &'static str = "gpubook-contents";

    fn table(&self) -> String {
        let mut out = String::from("| part | chapters |\n|---|---|\n");
        for (part, chapters) in parts(&self.summary, &self.catalog) {
            let list: Vec<String> = chapters
                .iter()
                .map(|c| {
                    if self.drafts.contains(&c.number) {
                        format!("{} {} *(being written)*", c.number, c.title)
                    } else {
                        format!("{} [{}]({}/index.md)", c.number, c.title, c.folder)
                    }
                })
                .collect();
            out += &format!("| **{part}** | {} |\n", list.join(" · "));
        }
        out
    }
}

impl Preprocessor for Contents {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let table = self.table();
        let mut error = None;
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let found = markers::find(&ch.content, &["contents"]).unwrap_or_default();
            match markers::replace(&ch.content, &found, |_| Ok(table.clone())) {
                Ok(c) => ch.content = c,
                Err(mut es) => error = es.pop(),
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(book),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook_course::catalog::Chapter;

    fn catalog() -> Catalog {
        let ch = |number, folder: &str| Chapter { number, title: format!("T{number}"), folder: folder.into() };
        Catalog { chapters: vec![ch(1, "ch01-a"), ch(2, "ch02-b")], exercises: vec![] }
    }

    /// A book source folder with the given chapter pages written.
    fn src(pages: &[&str]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpubook-summary-{}-{}", std::process::id(), pages.join("+")));
        for p in pages {
            std::fs::create_dir_all(dir.join(p)).unwrap();
            std::fs::write(dir.join(p).join("index.md"), "# x").unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn written_chapters_are_linked_in_order() {
        let both = src(&["ch01-a", "ch02-b"]);
        assert_eq!(check("- [A](ch01-a/index.md)\n- [B](ch02-b/index.md)\n", &both, &catalog()).unwrap(), Vec::<u32>::new());
        let e = check("- [B](ch02-b/index.md)\n- [A](ch01-a/index.md)\n", &both, &catalog()).unwrap_err();
        assert!(e.to_string().contains("other way round"), "{e}");
        let e = check("- [A](ch01-a/index.md)\n", &both, &catalog()).unwrap_err();
        assert!(e.to_string().contains("ch02-b/index.md exists but no entry links it"), "{e}");
    }

    #[test]
    fn unwritten_chapters_are_drafts() {
        let one = src(&["ch01-a"]);
        assert_eq!(check("- [A](ch01-a/index.md)\n- [T2]()\n", &one, &catalog()).unwrap(), vec![2]);
        let e = check("- [A](ch01-a/index.md)\n- [B](ch02-b/index.md)\n", &one, &catalog()).unwrap_err();
        assert!(e.to_string().contains("does not exist yet"), "{e}");
        let e = check("- [A](ch01-a/index.md)\n", &one, &catalog()).unwrap_err();
        assert!(e.to_string().contains("chapter 2 (T2) has no entry"), "{e}");
    }

    #[test]
    fn contents_follow_the_summary_parts_and_mark_drafts() {
        let summary = "# Summary\n[Intro](intro.md)\n# I. Basics\n- [A](ch01-a/index.md)\n# II. More\n- [T2]()\n";
        let c = Contents { summary: summary.into(), catalog: catalog(), drafts: vec![2] };
        let t = c.table();
        assert!(t.contains("| **I. Basics** | 1 [T1](ch01-a/index.md) |"), "{t}");
        assert!(t.contains("| **II. More** | 2 T2 *(being written)* |"), "{t}");
    }
}
