//! Code blocks reflowed to the column. The repository's code is formatted 140 columns wide (the
//! workspace's rustfmt), the book's column holds [`COLUMNS`] characters of code, and a line cut
//! at the right edge hides what it says (an exercise's specification, once). So, after mdbook has
//! expanded the `{{#include}}`s, the long lines of every fenced code block are broken where a
//! person would break them:
//!
//! - a run of comment lines (`///`, `//`, `#`) with a long line in it is refilled as paragraphs,
//!   keeping its marker, its blank comment lines and its list items;
//! - a long code line's trailing comment moves to a line of its own above it; code breaks after a
//!   `, `, before `&&` or a `.method(` chained on a `)`, or after an opening bracket, the rest
//!   indented one level deeper; a Rust string breaks between words with a `\` (the same string,
//!   as Rust reads it); a shell line with ` \`;
//! - program output breaks between words.
//!
//! A line with no such place is left as it is, and the browser check (scripts/ci/book_check.py)
//! reports it.

use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};

/// The most characters of code a line of the column shows: mdbook's code is 14 px Source Code
/// Pro, 8.4 px a character, in a 750 px column less 20 px of padding (measured in Chromium).
pub const COLUMNS: usize = 86;

/// The same inside an exercise box, whose code sits in a narrower column (617 px).
pub const BOX_COLUMNS: usize = 70;

pub struct CodeWrap;

impl CodeWrap {
    pub const NAME: &'static str = "gpubook-wrap";
}

impl Preprocessor for CodeWrap {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        book.for_each_mut(|item| {
            if let BookItem::Chapter(ch) = item {
                ch.content = wrap_markdown(&ch.content, COLUMNS);
            }
        });
        Ok(book)
    }
}

/// `md` with the long lines of its fenced code blocks reflowed.
pub fn wrap_markdown(md: &str, max: usize) -> String {
    let mut out = String::with_capacity(md.len() + md.len() / 16);
    // The open fence: its marker, its length, the block's language and the lines so far.
    let mut fence: Option<(char, usize, Lang, Vec<String>)> = None;
    for line in md.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map(|m| trimmed.chars().take_while(|c| *c == m).count()).unwrap_or(0);
        match (&mut fence, marker) {
            (None, Some(m)) if run >= 3 => {
                let info = trimmed[run..].split([',', ' ']).next().unwrap_or("").to_string();
                fence = Some((m, run, Lang::of(&info), Vec::new()));
                out.push_str(line);
            }
            (Some((m, n, lang, lines)), Some(c)) if c == *m && run >= *n && trimmed[run..].trim().is_empty() => {
                for l in wrap_block(lines, max, *lang) {
                    out.push_str(&l);
                    out.push('\n');
                }
                fence = None;
                out.push_str(line);
            }
            (Some((.., lines)), _) => lines.push(body.to_string()),
            (None, _) => out.push_str(line),
        }
    }
    // A block left open at the end of the page is left as it was.
    if let Some((.., lines)) = fence {
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// How a block's lines may be broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// Rust: code breaks, `//` comments, strings continued with `\`.
    Rust,
    /// C, CUDA: code breaks, `//` comments.
    C,
    /// Shell: `#` comments, and a broken command line ends in ` \`.
    Shell,
    /// Program output and anything else: between words.
    Text,
}

impl Lang {
    pub fn of(info: &str) -> Lang {
        match info {
            "rust" => Lang::Rust,
            "c" | "cpp" | "cuda" | "c++" => Lang::C,
            "sh" | "bash" | "console" | "shell" => Lang::Shell,
            _ => Lang::Text,
        }
    }
}

/// A block's lines, reflowed: comment runs as paragraphs, other lines one by one. Indentation
/// every line shares (an anchor inside a function) is taken off first.
pub fn wrap_block(lines: &[String], max: usize, lang: Lang) -> Vec<String> {
    let common = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start_matches(' ').len()).min().unwrap_or(0);
    let lines: Vec<String> = lines.iter().map(|l| l.get(common..).unwrap_or("").to_string()).collect();
    let lines = &lines;
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some((indent, marker)) = comment_prefix(&lines[i], lang) {
            let prefix = format!("{indent}{marker}");
            let end = (i..lines.len()).find(|&j| comment_prefix(&lines[j], lang).is_none_or(|(a, b)| format!("{a}{b}") != prefix));
            let end = end.unwrap_or(lines.len());
            let run = &lines[i..end];
            if run.iter().any(|l| l.chars().count() > max) {
                out.extend(refill(run, &prefix, max));
            } else {
                out.extend(run.iter().cloned());
            }
            i = end;
        } else {
            if lines[i].chars().count() > max {
                out.extend(wrap_line(&lines[i], max, lang));
            } else {
                out.push(lines[i].clone());
            }
            i += 1;
        }
    }
    out
}

/// The indentation and comment marker a line starts with (`    `, `/// `), if it is a comment.
fn comment_prefix(line: &str, lang: Lang) -> Option<(String, String)> {
    let indent: String = line.chars().take_while(|c| *c == ' ').collect();
    let rest = &line[indent.len()..];
    let markers: &[&str] = match lang {
        Lang::Rust | Lang::C => &["//!", "///", "//"],
        Lang::Shell => &["#"],
        Lang::Text => &[],
    };
    let m = markers.iter().find(|m| rest.starts_with(*m) && (rest.len() == m.len() || rest[m.len()..].starts_with(' ')))?;
    // `////` and `#!` are not comments of this kind.
    if rest[m.len()..].starts_with('/') {
        return None;
    }
    let marker = if rest.len() > m.len() { format!("{m} ") } else { m.to_string() };
    Some((indent, marker))
}

/// Comment lines (all with `prefix`) refilled: paragraphs end at an empty comment line, and a
/// list item (`- `, `* `, `1. `) starts one of its own whose lines hang under its text.
fn refill(run: &[String], prefix: &str, max: usize) -> Vec<String> {
    let bare = prefix.trim_end();
    let mut out = Vec::new();
    // (first-line prefix, continuation prefix, words)
    let mut para: Option<(String, String, Vec<String>)> = None;
    let flush = |para: &mut Option<(String, String, Vec<String>)>, out: &mut Vec<String>| {
        if let Some((first, next, words)) = para.take() {
            out.extend(wrap_words(&words.join(" "), &first, &next, max));
        }
    };
    for line in run {
        let text = line.strip_prefix(prefix).or_else(|| line.strip_prefix(bare)).unwrap_or(line);
        if text.trim().is_empty() {
            flush(&mut para, &mut out);
            out.push(bare.to_string());
            continue;
        }
        let lead = text.len() - text.trim_start().len();
        let t = text.trim_start();
        let item = ["- ", "* "].iter().find(|m| t.starts_with(*m)).map(|m| m.len()).or_else(|| {
            let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
            (digits > 0 && t[digits..].starts_with(". ")).then_some(digits + 2)
        });
        if t.starts_with('|') {
            // A table row (a doc comment's Markdown table) stays a line of its own; a long one
            // continues under itself.
            flush(&mut para, &mut out);
            out.extend(wrap_words(t, &format!("{prefix}{}", " ".repeat(lead)), &format!("{prefix}{}    ", " ".repeat(lead)), max));
            continue;
        }
        match item {
            Some(n) => {
                flush(&mut para, &mut out);
                let first = format!("{prefix}{}{}", " ".repeat(lead), &t[..n]);
                let next = format!("{prefix}{}", " ".repeat(lead + n));
                para = Some((first, next, vec![t[n..].to_string()]));
            }
            None if lead > 0 && para.is_none() => {
                // Indented text that belongs to no item (an example): kept as a line.
                out.push(line.clone());
            }
            None => match &mut para {
                Some((.., words)) => words.push(t.to_string()),
                None => para = Some((prefix.to_string(), prefix.to_string(), vec![t.to_string()])),
            },
        }
    }
    flush(&mut para, &mut out);
    out
}

/// `line` as lines of at most `max` characters where it can be broken (see the module docs).
pub fn wrap_line(line: &str, max: usize, lang: Lang) -> Vec<String> {
    if let Some((indent, marker)) = comment_prefix(line, lang) {
        return refill(&[line.to_string()], &format!("{indent}{marker}"), max);
    }
    match lang {
        Lang::Text => {
            let indent: String = line.chars().take_while(|c| *c == ' ').collect();
            wrap_words(&line[indent.len()..], &indent, &format!("{indent}  "), max)
        }
        _ => match trailing_comment(line, lang) {
            // A long line's trailing comment goes on a line of its own, above the code.
            Some(at) => {
                let indent = " ".repeat(line.len() - line.trim_start().len());
                let mut out = wrap_line(&format!("{indent}{}", line[at..].trim_start()), max, lang);
                let code = line[..at].trim_end();
                out.extend(if code.chars().count() > max { wrap_code(code, max, lang) } else { vec![code.to_string()] });
                out
            }
            None => wrap_code(line, max, lang),
        },
    }
}

/// Where a comment that follows code on `line` starts (its `//`), outside strings.
fn trailing_comment(line: &str, lang: Lang) -> Option<usize> {
    if !matches!(lang, Lang::Rust | Lang::C) || line.trim_start().starts_with("//") {
        return None;
    }
    let (mut in_str, mut escaped) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') && i > 0 && bytes[i - 1] == b' ' {
            return Some(i);
        }
    }
    None
}

/// Words filled into lines: the first starts with `first`, the others with `next`.
fn wrap_words(text: &str, first: &str, next: &str, max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = first.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let fits = cur.chars().count() + usize::from(!empty) + word.chars().count() <= max;
        if !empty && !fits {
            lines.push(std::mem::replace(&mut cur, next.to_string()));
            empty = true;
        }
        if !empty {
            cur.push(' ');
        }
        cur.push_str(word);
        empty = false;
    }
    lines.push(cur);
    lines
}

/// A code line broken at the best place that keeps the head within `max`, again and again;
/// continuation lines are indented four more than the line.
fn wrap_code(line: &str, max: usize, lang: Lang) -> Vec<String> {
    let indent = line.len() - line.trim_start().len();
    let cont = " ".repeat(indent + 4);
    let mut lines = Vec::new();
    let mut cur = line.to_string();
    let mut in_str = false;
    let mut first = true;
    while cur.chars().count() > max {
        let room = if lang == Lang::Shell { max - 2 } else { max };
        let Some(b) = best_break(&cur, room, if first { indent } else { cont.len() }, in_str, lang) else {
            break;
        };
        let head = cur[..b.head_end].trim_end();
        let tail = cur[b.tail_start..].trim_start();
        lines.push(match (lang, b.in_str) {
            (Lang::Shell, _) => format!("{head} \\"),
            // A Rust string continues on the next line: `\` drops the newline and the next
            // line's indentation, so the space before it stays the only one.
            (_, true) => format!("{}\\", &cur[..b.head_end]),
            _ => head.to_string(),
        });
        cur = format!("{cont}{tail}");
        in_str = b.in_str;
        first = false;
    }
    lines.push(cur);
    lines
}

/// A place to break a line.
struct Break {
    head_end: usize,
    tail_start: usize,
    /// The break is inside a string (Rust only).
    in_str: bool,
}

/// Where to break `s` so that the head has at most `room` characters, or `None`. `in_str`: the
/// line starts inside a string (the tail of an earlier break). A break inside a string is a
/// last resort, only in Rust, and only at a space; never in the indentation.
fn best_break(s: &str, room: usize, indent: usize, mut in_str: bool, lang: Lang) -> Option<Break> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    // (head end, tail start, priority, column, in a string)
    let mut cands: Vec<(usize, usize, u8, usize, bool)> = Vec::new();
    let min_head = indent + 8;
    let mut escaped = false;
    for (col, &(at, c)) in chars.iter().enumerate() {
        let next = |k: usize| chars.get(col + k).map(|x| x.1);
        let prev = if col > 0 { Some(chars[col - 1].1) } else { None };
        if in_str {
            // Inside a string: a space followed by more text, in Rust, keeping a space on the
            // head (the `\` eats the next line's indentation, not this space).
            if c == ' ' && lang == Lang::Rust && col + 2 <= room && col > min_head && next(1).is_some_and(|n| n != ' ' && n != '"') {
                cands.push((at + 1, at + 1, 0, col + 2, true));
            }
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c == '"' {
            in_str = true;
            continue;
        }
        if col <= min_head || col > room {
            continue;
        }
        let cand: Option<(usize, usize, u8)> = match (c, next(1), next(2)) {
            // after `, ` or `; `
            (' ', _, _) if matches!(prev, Some(',' | ';')) => Some((at, at + 1, 4)),
            // before `&&`, `||`, `=>`
            (' ', Some('&'), Some('&')) | (' ', Some('|'), Some('|')) | (' ', Some('='), Some('>')) => Some((at, at + 1, 4)),
            // before a method call `.name(` chained on a `)`
            ('.', Some(n), _) if prev == Some(')') && n.is_alphabetic() => Some((at, at, 3)),
            // after an opening bracket
            ('(' | '[' | '{', Some(n), _) if !matches!(n, ')' | ']' | '}') && col < room => Some((at + 1, at + 1, 2)),
            // any other space between tokens
            (' ', Some(n), _) if n != ' ' => Some((at, at + 1, 1)),
            _ => None,
        };
        if let Some((h, t, p)) = cand {
            cands.push((h, t, p, col, false));
        }
    }
    // The best kind of place that leaves at least half the room on the line, rightmost first;
    // failing that, the rightmost place of any kind.
    let long = cands.iter().filter(|c| c.3 * 2 >= room).max_by_key(|c| (c.2, c.3));
    long.or_else(|| cands.iter().max_by_key(|c| c.3)).map(|&(head_end, tail_start, _, _, in_str)| Break { head_end, tail_start, in_str })
}

/// Text for a `<pre>` inside HTML: reflowed to the column, escaped, and with no blank line
/// (which would end the HTML block for Markdown: a blank line becomes a no-break space).
pub fn preformatted_html(text: &str, lang: Lang, max: usize) -> String {
    let lines: Vec<String> = text.trim_end().lines().map(str::to_string).collect();
    wrap_block(&lines, max, lang)
        .into_iter()
        .map(|l| if l.trim().is_empty() { "&#160;".to_string() } else { l.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;") })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(lines: &[String]) -> usize {
        lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    /// The words of `lines`, comment markers left out.
    fn tokens(lines: &[String]) -> String {
        lines.iter().flat_map(|l| l.split_whitespace()).filter(|w| *w != "///").collect()
    }

    #[test]
    fn shared_indentation_is_taken_off() {
        let md = "```rust\n    let x = 1;\n\n        y();\n```\n";
        assert_eq!(wrap_markdown(md, 80), "```rust\nlet x = 1;\n\n    y();\n```\n");
    }

    #[test]
    fn short_lines_and_prose_stay_as_they_are() {
        let md = "Some prose that is much longer than eighty-eight characters, which Markdown wraps by itself anyway.\n```rust\nlet x = 1;\n```\n";
        assert_eq!(wrap_markdown(md, 40), md);
    }

    #[test]
    fn code_breaks_after_commas_and_keeps_indentation() {
        let line = "    let cfg = LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };";
        let out = wrap_line(line, 60, Lang::Rust);
        assert!(widest(&out) <= 60, "{out:#?}");
        assert!(out[0].starts_with("    let cfg"));
        assert!(out[1..].iter().all(|l| l.starts_with("        ")), "{out:#?}");
        assert_eq!(tokens(&out), tokens(&[line.to_string()]));
    }

    #[test]
    fn comment_runs_are_refilled_as_paragraphs_with_their_lists() {
        let run: Vec<String> = [
            "    /// Each rank's bubble when `programs` run with `costs`: the makespan (when the last op of any",
            "    /// rank ends) minus the time.",
            "    ///",
            "    /// - `F` of micro-batch m on stage s needs `F` of m on stage s-1 (stage 0 needs nothing);",
            "    /// - `B` or `Bz` of m needs the input gradient of m from",
            "    ///   stage s+1 (its `B` or `Bz`).",
        ]
        .map(String::from)
        .to_vec();
        let out = wrap_block(&run, 60, Lang::Rust);
        assert!(widest(&out) <= 60, "{out:#?}");
        // The shared indentation is gone; the marker stays on every line.
        assert!(out.iter().all(|l| l.starts_with("///")), "{out:#?}");
        assert!(out.contains(&"///".to_string()));
        // The paragraph flows on: no line of one or two words left behind.
        assert!(out[1].contains("rank ends)"), "{out:#?}");
        let item = out.iter().position(|l| l.starts_with("/// - `B`")).unwrap();
        assert!(out[item + 1].starts_with("///   "), "list items hang: {out:#?}");
        assert_eq!(tokens(&out), tokens(&run));
    }

    #[test]
    fn doc_tables_keep_their_rows() {
        let run: Vec<String> = ["/// | phase | repeat |", "/// |---|---|", "/// | 1 warm-up | 2·edge |"].map(String::from).to_vec();
        let mut long = run.clone();
        long.push("/// A paragraph after the table that is long enough to need wrapping, for sure.".into());
        let out = wrap_block(&long, 50, Lang::Rust);
        assert_eq!(&out[..3], &run[..]);
    }

    #[test]
    fn rust_strings_continue_with_a_backslash() {
        let line =
            r#"    todo!("time every op (it starts once its rank is free and its inputs have ended), then bubble = makespan - busy")"#;
        let out = wrap_line(line, 60, Lang::Rust);
        assert!(widest(&out) <= 60, "{out:#?}");
        assert!(out[0].ends_with(" \\"), "{out:#?}");
        // Rust drops the newline and the next line's leading spaces: the same string.
        let joined: String = out
            .iter()
            .enumerate()
            .map(|(i, l)| if i == 0 { l.clone() } else { l.trim_start().to_string() })
            .collect::<Vec<_>>()
            .join("")
            .replace("\\", "");
        assert_eq!(joined, line);
    }

    #[test]
    fn c_strings_are_never_broken() {
        let line = r#"    printf("a message with, commas, inside it, that must not be broken anywhere at all", x, y, z);"#;
        let out = wrap_line(line, 60, Lang::C);
        assert!(
            out.iter().any(|l| l.contains(r#""a message with, commas, inside it, that must not be broken anywhere at all""#)),
            "{out:#?}"
        );
    }

    #[test]
    fn a_trailing_comment_gets_a_line_of_its_own_above_the_code() {
        let line = "    int i = blockIdx.x * blockDim.x + threadIdx.x;   // this thread's element, past the end for the last block";
        let out = wrap_line(line, 60, Lang::C);
        assert!(out[0].starts_with("    // this thread's"), "{out:#?}");
        assert_eq!(out.last().unwrap(), "    int i = blockIdx.x * blockDim.x + threadIdx.x;");
        assert!(widest(&out) <= 60);
        let define = "#define TILE 16  // the host launches TILE × TILE threads per block (gpubook's TILE in ch04.rs)";
        let out = wrap_line(define, 60, Lang::C);
        assert_eq!(out.last().unwrap(), "#define TILE 16");
        assert!(out[..out.len() - 1].iter().all(|l| l.starts_with("// ")), "{out:#?}");
    }

    #[test]
    fn fenced_blocks_only_and_shell_lines_continue_with_a_backslash() {
        let md = "```sh\ncargo run --release -- pipeline --schedule zb1p --pp 8 --microbatches 20 --f 1 --b 3 --w 2\n```\n";
        let out = wrap_markdown(md, 50);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1].ends_with(" \\"), "{out}");
        assert!(lines.iter().all(|l| l.chars().count() <= 50), "{out}");
        assert_eq!(lines.last(), Some(&"```"));
    }
}
