//! SUMMARY.md against exercises.toml: every `[[chapter]]` has a part in the table of contents, in
//! the catalog's order, with a link to its folder's `index.md` once that page exists, and a draft
//! entry (`- [Title]()`, shown greyed out) until then. SUMMARY.md stays a plain file mdbook reads;
//! this keeps it from drifting from the one list of chapters.

use anyhow::bail;
use gpubook::catalog::Catalog;
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

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook::catalog::Chapter;

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
}
