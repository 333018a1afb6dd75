//! A link checker for the built HTML: every relative `href`/`src` must name a file of the build,
//! and every `#fragment` an `id` on that page. External links are not fetched (CI has no network
//! to spare, and they are not ours to keep alive).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// A broken link: the page it is on and the link as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub page: PathBuf,
    pub link: String,
    pub why: String,
}

/// Checks every `.html` page under `dest`. `404.html` is left out: its links are absolute to the
/// site's URL, on purpose (it is served at any path); so is the rustdoc under `api/`, whose
/// links are rustdoc's (the book's links into it are checked).
pub fn check(dest: &Path) -> std::io::Result<Vec<Broken>> {
    let mut pages = Vec::new();
    collect_html(dest, &mut pages)?;
    let mut ids: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut broken = Vec::new();
    for page in &pages {
        if page.file_name().is_some_and(|n| n == "404.html") {
            continue;
        }
        let html = std::fs::read_to_string(page)?;
        for link in attribute_values(&html, &["href", "src"]) {
            if is_external(&link) {
                continue;
            }
            let (path_part, fragment) = match link.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (link.as_str(), None),
            };
            let path_part = path_part.split('?').next().unwrap_or("");
            let target = if path_part.is_empty() { page.clone() } else { resolve(page.parent().unwrap_or(dest), &decode(path_part)) };
            let target = if target.is_dir() { target.join("index.html") } else { target };
            if !target.starts_with(dest) || !target.is_file() {
                broken.push(Broken { page: page.clone(), link: link.clone(), why: "no such file".into() });
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if target.extension().is_some_and(|e| e == "html") {
                if !ids.contains_key(&target) {
                    let text = std::fs::read_to_string(&target)?;
                    ids.insert(target.clone(), attribute_values(&text, &["id", "name"]));
                }
                if !ids[&target].iter().any(|id| *id == decode(fragment)) {
                    broken.push(Broken { page: page.clone(), link: link.clone(), why: format!("no id=\"{fragment}\" there") });
                }
            }
        }
    }
    Ok(broken)
}

fn collect_html(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut walk = walkdir::WalkDir::new(dir).into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry?;
        let path = entry.path();
        // The rustdoc under api/: its links are rustdoc's (the book's links into it are checked).
        if entry.file_type().is_dir() && path.file_name().is_some_and(|n| n == "api") && path.join("gpubook").is_dir() {
            walk.skip_current_dir();
            continue;
        }
        if path.extension().is_some_and(|e| e == "html") && path.is_file() {
            let path = path.to_path_buf();
            out.push(path);
        }
    }
    Ok(())
}

fn is_external(link: &str) -> bool {
    let lower = link.to_ascii_lowercase();
    lower.starts_with("//")
        || lower
            .split_once(':')
            .is_some_and(|(scheme, _)| scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) && !scheme.is_empty())
}

/// The values of `name="..."` (or `'...'`) attributes in `html`: enough for the HTML mdbook
/// writes, without a parser.
fn attribute_values(html: &str, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = html.as_bytes();
    for name in names {
        let pat = format!("{name}=");
        let mut from = 0;
        while let Some(at) = html[from..].find(&pat).map(|i| from + i) {
            from = at + pat.len();
            // A whole attribute name: preceded by whitespace (not `data-href=` or `xhref=`).
            if at == 0 || !bytes[at - 1].is_ascii_whitespace() {
                continue;
            }
            let Some(&quote) = bytes.get(from).filter(|q| **q == b'"' || **q == b'\'') else {
                continue;
            };
            if let Some(len) = html[from + 1..].find(quote as char) {
                out.push(html[from + 1..from + 1 + len].replace("&amp;", "&"));
            }
        }
    }
    out
}

/// `base/rel` with `.` and `..` folded (without touching the file system).
fn resolve(base: &Path, rel: &str) -> PathBuf {
    let mut out = if rel.starts_with('/') { PathBuf::from("/") } else { base.to_path_buf() };
    for c in Path::new(rel).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// `%20` → ` `.
pub(crate) fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_missing_pages_and_fragments() {
        let dir = std::env::temp_dir().join(format!("gpubook-links-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ch01")).unwrap();
        std::fs::write(dir.join("index.html"), r##"<a href="ch01/index.html#start">ok</a> <a href="ch01/index.html#nowhere">x</a> <a href="ch02/">y</a> <a href="https://example.org">e</a> <img src="pic%20one.svg"> <a href="#top">t</a><h1 id="top">"##).unwrap();
        std::fs::write(dir.join("pic one.svg"), "<svg/>").unwrap();
        std::fs::write(
            dir.join("ch01/index.html"),
            r#"<h2 id="start">Start</h2><a href="../index.html">up</a> <a data-href="nope.html">d</a>"#,
        )
        .unwrap();
        let broken = check(&dir).unwrap();
        let links: Vec<_> = broken.iter().map(|b| b.link.as_str()).collect();
        assert_eq!(links, ["ch01/index.html#nowhere", "ch02/"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn schemes_are_external() {
        assert!(is_external("mailto:a@b") && is_external("https://x") && is_external("//cdn/x.js"));
        assert!(!is_external("ch01/index.html") && !is_external("#x") && !is_external("../a.html"));
    }
}
