//! `{{#name arg key=value key="several words"}}` markers in a page, as mdbook writes its own
//! `{{#include}}`. A backslash before one (`\{{#figure ...}}`) leaves it alone: mdbook's links
//! preprocessor, which runs after ours, removes the backslash.

use anyhow::{Context, anyhow, bail};
use std::ops::Range;
use std::str::FromStr;

/// One marker found in a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Byte range of the whole `{{#...}}` in the page.
    pub range: Range<usize>,
    pub name: String,
    pub args: Args,
    /// The text between the braces, whitespace collapsed: `figure launch n=1000`.
    pub text: String,
}

impl Marker {
    /// The same marker without its `key=` arguments (its text too).
    pub fn without(&self, key: &str) -> Marker {
        let mut m = self.clone();
        m.args.named.retain(|(k, _)| k != key);
        m.text = self.text.split(' ').filter(|w| !w.starts_with(&format!("{key}="))).collect::<Vec<_>>().join(" ");
        m
    }
}

/// The markers named one of `names`, in page order.
pub fn find(page: &str, names: &[&str]) -> anyhow::Result<Vec<Marker>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = page[from..].find("{{#").map(|i| from + i) {
        let end = page[at..].find("}}").map(|i| at + i + 2);
        from = at + 3;
        if page[..at].ends_with('\\') {
            continue;
        }
        let inner = match end {
            Some(end) => &page[at + 3..end - 2],
            None => continue,
        };
        let mut words = inner.split_whitespace();
        let Some(name) = words.next().filter(|n| names.contains(n)) else {
            continue;
        };
        let end = end.unwrap_or(at);
        let rest = inner.trim_start().strip_prefix(name).unwrap_or("");
        let args = Args::parse(rest).with_context(|| format!("in `{}`", &page[at..end]))?;
        let text = inner.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(Marker { range: at..end, name: name.to_string(), args, text });
        from = end;
    }
    Ok(out)
}

/// `page` with each marker replaced by what `render` makes of it. Errors are collected rather
/// than stopping at the first, so an author sees every broken marker of a page at once.
pub fn replace(
    page: &str,
    markers: &[Marker],
    mut render: impl FnMut(&Marker) -> anyhow::Result<String>,
) -> Result<String, Vec<anyhow::Error>> {
    let mut out = String::with_capacity(page.len());
    let mut errors = Vec::new();
    let mut last = 0;
    for m in markers {
        out.push_str(&page[last..m.range.start]);
        match render(m) {
            Ok(s) => out.push_str(&s),
            Err(e) => errors.push(e.context(format!("{{{{#{}}}}}", m.text))),
        }
        last = m.range.end;
    }
    out.push_str(&page[last..]);
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// A marker's arguments: words, then `key=value` pairs (values may be double-quoted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub positional: Vec<String>,
    pub named: Vec<(String, String)>,
}

impl Args {
    pub fn parse(s: &str) -> anyhow::Result<Args> {
        let mut args = Args::default();
        let mut chars = s.trim().chars().peekable();
        while chars.peek().is_some() {
            let mut word = String::new();
            let mut quoted = false;
            while let Some(&c) = chars.peek() {
                chars.next();
                match c {
                    '"' => quoted = !quoted,
                    c if c.is_whitespace() && !quoted => break,
                    c => word.push(c),
                }
            }
            if quoted {
                bail!("a quote is not closed");
            }
            match word.split_once('=') {
                Some((k, v)) => args.named.push((k.to_string(), v.to_string())),
                None if !word.is_empty() => args.positional.push(word),
                None => {}
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
        }
        Ok(args)
    }

    pub fn positional(&self, i: usize) -> Option<&str> {
        self.positional.get(i).map(String::as_str)
    }

    pub fn raw(&self, key: &str) -> Option<&str> {
        self.named.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `key`'s value parsed, or `default` when absent.
    pub fn get<T: FromStr>(&self, key: &str, default: T) -> anyhow::Result<T>
    where
        T::Err: std::fmt::Display,
    {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|e| anyhow!("`{key}={v}`: {e}")),
        }
    }

    /// `key`'s value parsed; an error when absent.
    pub fn need<T: FromStr>(&self, key: &str) -> anyhow::Result<T>
    where
        T::Err: std::fmt::Display,
    {
        let v = self.raw(key).ok_or_else(|| anyhow!("needs `{key}=`"))?;
        v.parse().map_err(|e| anyhow!("`{key}={v}`: {e}"))
    }

    /// `16x16` → (16, 16), `256` → (256, 1).
    pub fn dims(&self, key: &str, default: (u32, u32)) -> anyhow::Result<(u32, u32)> {
        let Some(v) = self.raw(key) else {
            return Ok(default);
        };
        let parse = |s: &str| s.trim().parse::<u32>().map_err(|e| anyhow!("`{key}={v}`: {e}"));
        match v.split_once(['x', '×']) {
            Some((a, b)) => Ok((parse(a)?, parse(b)?)),
            None => Ok((parse(v)?, 1)),
        }
    }

    /// A byte size: `4096`, `4KiB`, `64MiB`.
    pub fn bytes(&self, key: &str, default: usize) -> anyhow::Result<usize> {
        let Some(v) = self.raw(key) else {
            return Ok(default);
        };
        let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
        let scale = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" => 1 << 10,
            "MiB" | "M" => 1 << 20,
            "GiB" | "G" => 1 << 30,
            u => bail!("`{key}={v}`: unknown unit `{u}` (B, KiB, MiB, GiB)"),
        };
        Ok(num.parse::<usize>().map_err(|e| anyhow!("`{key}={v}`: {e}"))? * scale)
    }

    /// An error naming any key outside `known`, and any positional word beyond `positional`.
    pub fn only(&self, positional: usize, known: &[&str]) -> anyhow::Result<()> {
        if let Some((k, _)) = self.named.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            bail!("unknown option `{k}` (it takes: {})", known.join(", "));
        }
        if self.positional.len() > positional {
            bail!("unexpected `{}`", self.positional[positional..].join(" "));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_named_markers_and_skips_escaped_and_foreign_ones() {
        let page = "a {{#figure launch n=1000 block=256}} b \\{{#figure x}} {{#include f.rs}} {{#exercise ch03-vector-add}}";
        let m = find(page, &["figure", "exercise"]).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].text, "figure launch n=1000 block=256");
        assert_eq!(&page[m[0].range.clone()], "{{#figure launch n=1000 block=256}}");
        assert_eq!(m[0].args.positional(0), Some("launch"));
        assert_eq!(m[0].args.get("n", 0usize).unwrap(), 1000);
        assert_eq!(m[1].args.positional(0), Some("ch03-vector-add"));
    }

    #[test]
    fn a_marker_without_a_key() {
        let m = find("{{#run overlap n=5 recorded=h200-overlap}}", &["run"]).unwrap().remove(0);
        let w = m.without("recorded");
        assert_eq!(w.text, "run overlap n=5");
        assert_eq!(w.args.raw("recorded"), None);
        assert_eq!(w.args.raw("n"), Some("5"));
    }

    #[test]
    fn parses_quotes_dims_and_sizes() {
        let a = Args::parse(r#"thread-map matrix_2d block=16x8 to=64MiB caption="who wrote what""#).unwrap();
        assert_eq!(a.positional, ["thread-map", "matrix_2d"]);
        assert_eq!(a.dims("block", (1, 1)).unwrap(), (16, 8));
        assert_eq!(a.bytes("to", 0).unwrap(), 64 << 20);
        assert_eq!(a.raw("caption"), Some("who wrote what"));
        assert!(a.only(2, &["block", "to"]).unwrap_err().to_string().contains("caption"));
        assert!(Args::parse("caption=\"open").is_err());
    }

    #[test]
    fn replace_collects_every_error() {
        let page = "{{#figure a}} and {{#figure b}}";
        let m = find(page, &["figure"]).unwrap();
        let errs = replace(page, &m, |m| Err(anyhow!("bad {}", m.args.positional(0).unwrap()))).unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(replace(page, &m, |m| Ok(m.args.positional(0).unwrap().to_uppercase())).unwrap(), "A and B");
    }
}
