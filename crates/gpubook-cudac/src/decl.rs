//! Reading declarations out of a token stream: which braces open function code, where a
//! statement starts, and what a `__shared__` declaration declares. The findings read shared
//! declarations through this, and the emulator's rewrite turns the same [`SharedDecl`] into C++,
//! so both agree on every declarator.

use crate::lex::{Kind, Token};

/// What an open brace encloses: function code, or a scope where declarations are file-level
/// (`extern "C" { }`, `namespace { }`, a struct body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Code,
    Other,
}

/// The scope a `{` opens, given the tokens before it and the scopes it sits in.
pub fn classify_brace(before: &[Token], scopes: &[Scope]) -> Scope {
    if scopes.contains(&Scope::Code) {
        return Scope::Code; // a block, lambda or initializer inside a function
    }
    // A function body follows `)` or a trailing qualifier: `void f() const {`.
    let prev = before.iter().rev().find(|t| !matches!(t.text, "const" | "noexcept" | "override" | "final" | "mutable" | "volatile"));
    if prev.is_some_and(|t| t.is_punct(')')) { Scope::Code } else { Scope::Other }
}

/// Index of the first token of the statement holding token `i`.
pub fn statement_start(tokens: &[Token], i: usize) -> usize {
    (0..i).rev().find(|&j| matches!(tokens[j].kind, Kind::Punct(';' | '{' | '}') | Kind::Directive)).map_or(0, |j| j + 1)
}

/// `[static|extern] __shared__ [__align__(N)] TYPE a[N], *b;`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDecl<'a> {
    pub is_extern: bool,
    /// The type every declarator shares, as written (`float`, `unsigned char`).
    pub ty: String,
    /// `__align__(N)` or `alignas(N)`'s N, as written.
    pub align: Option<String>,
    pub declarators: Vec<Declarator<'a>>,
}

/// One name of a declaration: `*p`, `tile[16][TILE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declarator<'a> {
    pub name: &'a str,
    /// How many `*` precede the name.
    pub stars: usize,
    /// What follows the name, as written (`[16][TILE]`, or empty).
    pub dims: String,
    /// It has an initializer (`= ...`), which CUDA forbids on `__shared__`.
    pub initialized: bool,
}

impl<'a> SharedDecl<'a> {
    /// Reads the tokens of one declaration statement (without its `;`); `None` when it is not
    /// one this reader understands (no type, no name).
    pub fn parse(decl: &[Token<'a>]) -> Option<SharedDecl<'a>> {
        let is_extern = decl.iter().any(|t| t.is_ident("extern"));
        // Storage words and alignment attributes do not belong to the type.
        let mut kept: Vec<Token<'a>> = Vec::new();
        let mut align = None;
        let mut k = 0;
        while k < decl.len() {
            let t = decl[k];
            if matches!(t.text, "__align__" | "alignas" | "__attribute__") && t.kind == Kind::Ident {
                let end = skip_parens(decl, k + 1);
                if t.text != "__attribute__" && end > k + 2 {
                    align = Some(span_text(&decl[k + 2..end - 1]));
                }
                k = end;
                continue;
            }
            if !matches!(t.text, "__shared__" | "static" | "extern") || t.kind != Kind::Ident {
                kept.push(t);
            }
            k += 1;
        }
        let segments = split_top_level_commas(&kept);
        let first = segments.first()?;
        // In the first segment the declarator is the name (last identifier outside brackets) with
        // the stars right before it; everything earlier is the type shared by all declarators.
        let name_at = last_name(first)?;
        let stars_from = (0..name_at).rev().take_while(|&j| first[j].is_punct('*')).last().unwrap_or(name_at);
        if stars_from == 0 {
            return None; // no type
        }
        let ty = span_text(&first[..stars_from]);
        let mut declarators = Vec::new();
        for (n, seg) in segments.iter().enumerate() {
            let declarator = if n == 0 { &seg[stars_from..] } else { &seg[..] };
            let name_pos = last_name(declarator)?;
            declarators.push(Declarator {
                name: declarator[name_pos].text,
                stars: declarator[..name_pos].iter().filter(|t| t.is_punct('*')).count(),
                dims: span_text(&declarator[name_pos + 1..]),
                initialized: declarator[name_pos + 1..].iter().any(|t| t.is_punct('=')),
            });
        }
        Some(SharedDecl { is_extern, ty, align, declarators })
    }
}

/// Position of the declared name: the last identifier not inside `[...]`.
fn last_name(tokens: &[Token]) -> Option<usize> {
    let mut depth = 0i32;
    let mut found = None;
    for (j, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Punct('[') => depth += 1,
            Kind::Punct(']') => depth -= 1,
            Kind::Ident if depth == 0 => found = Some(j),
            _ => {}
        }
    }
    found
}

fn split_top_level_commas<'a>(tokens: &[Token<'a>]) -> Vec<Vec<Token<'a>>> {
    let mut out = vec![Vec::new()];
    // `<...>` only nests in a type (`Pair<int, 2>`); inside `[...]` it is a comparison or a
    // shift (`[N >> 1]`), so brackets and angles are counted apart.
    let (mut brackets, mut angles) = (0i32, 0i32);
    for t in tokens {
        match t.kind {
            Kind::Punct('(' | '[') => brackets += 1,
            Kind::Punct(')' | ']') => brackets -= 1,
            Kind::Punct('<') if brackets == 0 => angles += 1,
            Kind::Punct('>') if brackets == 0 => angles -= 1,
            Kind::Punct(',') if brackets == 0 && angles == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("never empty").push(*t);
    }
    out
}

/// Index after the parenthesized group starting at `open` (or `open` if there is none).
fn skip_parens(tokens: &[Token], open: usize) -> usize {
    if !tokens.get(open).is_some_and(|t| t.is_punct('(')) {
        return open;
    }
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        if t.is_punct('(') {
            depth += 1;
        } else if t.is_punct(')') {
            depth -= 1;
            if depth == 0 {
                return j + 1;
            }
        }
    }
    tokens.len()
}

/// The source text of a run of tokens, joined by single spaces where the source had
/// whitespace or comments; `>>` stays `>>`, `N * 2` stays as written.
fn span_text(tokens: &[Token]) -> String {
    let mut out = String::new();
    for (j, t) in tokens.iter().enumerate() {
        if j > 0 && tokens[j - 1].end() != t.start {
            out.push(' ');
        }
        out.push_str(t.text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::tokenize;

    fn parse(src: &str) -> Option<SharedDecl<'_>> {
        let tokens = tokenize(src);
        let end = tokens.iter().position(|t| t.is_punct(';')).unwrap_or(tokens.len());
        SharedDecl::parse(&tokens[..end]).map(|d| SharedDecl { declarators: d.declarators.clone(), ..d })
    }

    #[test]
    fn a_shared_declaration_reads_as_type_and_declarators() {
        let d = parse("__shared__ __align__(16) unsigned char raw[N >> 1], *p;").unwrap();
        assert!(!d.is_extern);
        assert_eq!(d.ty, "unsigned char");
        assert_eq!(d.align.as_deref(), Some("16"));
        let names: Vec<(&str, usize, &str)> = d.declarators.iter().map(|x| (x.name, x.stars, x.dims.as_str())).collect();
        assert_eq!(names, [("raw", 0, "[N >> 1]"), ("p", 1, "")]);
        let d = parse("extern __shared__ float s[];").unwrap();
        assert!(d.is_extern && d.declarators[0].name == "s" && d.declarators[0].dims == "[]" && d.align.is_none());
        assert!(parse("__shared__ int x = 3;").unwrap().declarators[0].initialized);
        assert_eq!(parse("__shared__ x;"), None, "no type");
    }

    #[test]
    fn braces_after_a_parameter_list_open_code() {
        let tokens = tokenize("extern \"C\" { __global__ void k(int n) const {");
        let at = |i: usize| classify_brace(&tokens[..i], &[]);
        let braces: Vec<usize> = tokens.iter().enumerate().filter(|(_, t)| t.is_punct('{')).map(|(i, _)| i).collect();
        assert_eq!(at(braces[0]), Scope::Other);
        assert_eq!(at(braces[1]), Scope::Code);
        assert_eq!(classify_brace(&tokens[..braces[0]], &[Scope::Code]), Scope::Code, "inside a function");
    }
}
