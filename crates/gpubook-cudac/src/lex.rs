//! A tokenizer just big enough to read CUDA C declarations: identifiers, numbers, string and
//! character literals, single-character punctuation and whole preprocessor directives, each with
//! its byte span and 1-based line. Comments are dropped. Everything that reads a learner's file
//! (the signature parser, the findings, the emulator's rewrite) reads it through this, so they
//! agree on what is code.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    /// A string or character literal, quotes included.
    Str,
    Punct(char),
    /// A whole preprocessor line (`#include <x.h>`), continuation lines included.
    Directive,
}

#[derive(Debug, Clone, Copy)]
pub struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    /// Byte offset of the first character in the source.
    pub start: usize,
    pub line: u32,
}

impl Token<'_> {
    pub fn is_ident(&self, word: &str) -> bool {
        self.kind == Kind::Ident && self.text == word
    }
    pub fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

pub fn tokenize(src: &str) -> Vec<Token<'_>> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    // True while only whitespace has been seen on the current line: a `#` there starts a
    // preprocessor directive.
    let mut line_start = true;
    let mut push = |kind, s: usize, e: usize, line: u32| {
        tokens.push(Token { kind, text: &src[s..e], start: s, line });
    };
    while i < bytes.len() {
        let c = bytes[i];
        let s = i;
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                continue;
            }
            b'#' if line_start => {
                let first_line = line;
                while i < bytes.len() && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
                        line += 1;
                        i += 1;
                    }
                    i += 1;
                }
                push(Kind::Directive, s, i, first_line);
            }
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                // An escape at the very end can step past a char boundary; stay on one.
                while !src.is_char_boundary(i) {
                    i += 1;
                }
                push(Kind::Str, s, i, line);
            }
            _ if c == b'_' || c.is_ascii_alphabetic() => {
                while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                push(Kind::Ident, s, i, line);
            }
            _ if c.is_ascii_digit() => {
                while i < bytes.len() && (bytes[i] == b'.' || bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                push(Kind::Number, s, i, line);
            }
            _ => {
                // Non-ASCII text (in an identifier we do not care about) is skipped whole.
                let ch = src[i..].chars().next().unwrap_or(' ');
                i += ch.len_utf8();
                if ch.is_ascii() {
                    push(Kind::Punct(ch), s, i, line);
                }
            }
        }
        line_start = false;
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_spans_and_lines() {
        let src = "#include <a.h>\nint x = 'c'; /* two\nlines */ f(\"s\\\"\");\n  #define M \\\n 1\ny";
        let toks = tokenize(src);
        let view: Vec<(Kind, &str, u32)> = toks.iter().map(|t| (t.kind, t.text, t.line)).collect();
        assert_eq!(
            view,
            [
                (Kind::Directive, "#include <a.h>", 1),
                (Kind::Ident, "int", 2),
                (Kind::Ident, "x", 2),
                (Kind::Punct('='), "=", 2),
                (Kind::Str, "'c'", 2),
                (Kind::Punct(';'), ";", 2),
                (Kind::Ident, "f", 3),
                (Kind::Punct('('), "(", 3),
                (Kind::Str, "\"s\\\"\"", 3),
                (Kind::Punct(')'), ")", 3),
                (Kind::Punct(';'), ";", 3),
                (Kind::Directive, "#define M \\\n 1", 4),
                (Kind::Ident, "y", 6),
            ]
        );
        for t in &toks {
            assert_eq!(&src[t.start..t.end()], t.text);
        }
    }

    #[test]
    fn unterminated_things_do_not_panic() {
        for src in ["\"abc", "'", "/* x", "#define X \\", "é\"\\é", "a\\"] {
            let _ = tokenize(src);
        }
    }
}
