//! Kernel signatures read straight from CUDA C source.
//!
//! Both backends check a launch's arguments against the kernel's parameter list before
//! launching (count, pointer vs scalar, element type), so that a learner who passes `n` where the
//! kernel wants `c` hears about it by name instead of reading garbage. NVRTC does not expose
//! parameter types and the emulator should not need a compiler for this, so we read them from the
//! text (through `lex`, which drops comments and keeps line numbers) and look for `__global__`
//! function definitions. Preprocessor lines are not expanded: a kernel made by a macro is not seen.

use std::fmt;

use crate::lex::{Kind, Token, tokenize};

/// One `__global__` function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSignature {
    /// The kernel's name as written (what `load_function` takes).
    pub name: String,
    /// 1-based line of the name in the source file.
    pub line: u32,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// Declared with C linkage (`extern "C"`, alone or as an `extern "C" { ... }` block): those
    /// keep their name through NVRTC. Others are found through a name expression (`find_kernel`).
    pub c_linkage: bool,
    /// `template <...>`'s parameter list as written (`typename T, int N`), for a template kernel:
    /// it is launched by a name expression that gives the arguments (`reduce<float, 256>`).
    pub template_params: Option<String>,
    /// The enclosing named namespaces, `a::b` (empty at file scope): C++ names are qualified.
    pub namespace: String,
}

impl KernelSignature {
    /// The name as C++ spells it from file scope: `ns::name`.
    pub fn qualified_name(&self) -> String {
        if self.namespace.is_empty() { self.name.clone() } else { format!("{}::{}", self.namespace, self.name) }
    }
}

/// How a name given to `load_function` names a kernel of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelRef<'a> {
    /// An `extern "C"` kernel: its symbol is its name.
    CLinkage(&'a KernelSignature),
    /// A C++-linkage kernel named by its plain name, the only kernel with that name: found through
    /// the name expression `expr` (its qualified name).
    Cpp { signature: &'a KernelSignature, expr: String },
    /// An instantiation of a template kernel, `reduce<256>`: `expr` is the name expression.
    Template { signature: &'a KernelSignature, expr: String },
}

impl<'a> KernelRef<'a> {
    pub fn signature(&self) -> &'a KernelSignature {
        match self {
            KernelRef::CLinkage(s) | KernelRef::Cpp { signature: s, .. } | KernelRef::Template { signature: s, .. } => s,
        }
    }
}

/// Why a name does not name exactly one kernel; `Display` says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelLookupError {
    /// No kernel has this name; `available` lists what the file defines.
    NotFound { name: String, available: Vec<String> },
    /// Several overloads share the name.
    Ambiguous { name: String, overloads: Vec<String> },
    /// A template kernel named without its arguments.
    NeedsTemplateArguments { name: String, template: String },
    /// Template arguments given to a kernel that is not a template.
    NotATemplate { name: String, signature: String },
}

impl fmt::Display for KernelLookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelLookupError::NotFound { name, available } if available.is_empty() => {
                write!(f, "there is no kernel named `{name}`: the file defines no `__global__` function")
            }
            KernelLookupError::NotFound { name, available } => {
                write!(f, "there is no kernel named `{name}` (the file defines `{}`)", available.join("`, `"))
            }
            KernelLookupError::Ambiguous { name, overloads } => write!(
                f,
                "`{name}` is ambiguous: {} kernels have that name ({}); give them different names, or \
                 declare the one to launch `extern \"C\"`",
                overloads.len(),
                overloads.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", ")
            ),
            KernelLookupError::NeedsTemplateArguments { name, template } => write!(
                f,
                "`{name}` is a template kernel (`template <{template}>`): name the instantiation to \
                 launch with its arguments, e.g. `load_function(\"{name}<...>\")`"
            ),
            KernelLookupError::NotATemplate { name, signature } => {
                write!(f, "`{name}` gives template arguments, but `{signature}` is not a template kernel")
            }
        }
    }
}

impl std::error::Error for KernelLookupError {}

/// Resolves a name given to `load_function`: a kernel's plain name (C or C++ linkage, when only
/// one kernel has it) or a template instantiation (`reduce<float, 256>`). Both backends use it,
/// so they accept and refuse the same names.
pub fn find_kernel<'a>(kernels: &'a [KernelSignature], name: &str) -> Result<KernelRef<'a>, KernelLookupError> {
    let name = name.trim();
    let (base, has_args) = match name.find('<') {
        Some(at) => (name[..at].trim(), true),
        None => (name, false),
    };
    let matches: Vec<&KernelSignature> = kernels.iter().filter(|k| k.name == base || k.qualified_name() == base).collect();
    let signature = match matches.as_slice() {
        [] => {
            let available = kernels.iter().map(|k| k.name.clone()).collect();
            return Err(KernelLookupError::NotFound { name: name.to_string(), available });
        }
        [one] => *one,
        many => {
            let overloads = many.iter().map(|k| k.to_string()).collect();
            return Err(KernelLookupError::Ambiguous { name: name.to_string(), overloads });
        }
    };
    match (&signature.template_params, has_args) {
        (Some(_), true) => {
            let args = &name[name.find('<').expect("has_args")..];
            Ok(KernelRef::Template { signature, expr: format!("{}{args}", signature.qualified_name()) })
        }
        (Some(t), false) => Err(KernelLookupError::NeedsTemplateArguments { name: name.to_string(), template: t.clone() }),
        (None, true) => Err(KernelLookupError::NotATemplate { name: name.to_string(), signature: signature.to_string() }),
        (None, false) if signature.c_linkage => Ok(KernelRef::CLinkage(signature)),
        (None, false) => Ok(KernelRef::Cpp { signature, expr: signature.qualified_name() }),
    }
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name, or "" when the source leaves it unnamed.
    pub name: String,
    /// The type as written, whitespace collapsed, e.g. `const float* __restrict__`.
    pub ty: String,
    /// A pointer (`T*`) or array (`T x[]`) parameter: it must be given a device buffer.
    pub pointer: bool,
    /// The element type with qualifiers dropped and spelling normalized (`unsigned` →
    /// `unsigned int`, `long long int` → `long long`), e.g. `float`, `int`, `float4`,
    /// `unsigned long long`. For a pointer, the pointee's type.
    pub base: String,
    /// `const` applies to what the kernel reads: the pointee for a pointer (`const float*`),
    /// the value for a scalar. A `float* const` pointer is not `is_const`: it may write.
    pub is_const: bool,
}

impl fmt::Display for KernelSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{p}")?;
        }
        write!(f, ")")
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name.is_empty(), self.ty.strip_suffix("[]")) {
            (true, _) => write!(f, "{}", self.ty),
            (false, Some(elem)) => write!(f, "{elem} {}[]", self.name),
            (false, None) => write!(f, "{} {}", self.ty, self.name),
        }
    }
}

/// Every `__global__` function *defined* in `source` (prototypes without a body are skipped, so
/// a kernel declared first and defined later appears once), in source order.
pub fn parse_kernels(source: &str) -> Vec<KernelSignature> {
    // Directives are never part of a signature; string tokens stay, for `extern "C"`.
    let tokens: Vec<Token> = tokenize(source).into_iter().filter(|t| t.kind != Kind::Directive).collect();
    let mut kernels: Vec<KernelSignature> = Vec::new();
    // One entry per open `{`: what it opened.
    let mut braces: Vec<Brace> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t.is_punct('{') {
            braces.push(if i >= 2 && is_extern_c(&tokens[i - 2..i]) {
                Brace::ExternC
            } else if i >= 2 && tokens[i - 2].is_ident("namespace") && tokens[i - 1].kind == Kind::Ident {
                Brace::Namespace(tokens[i - 1].text)
            } else {
                Brace::Other
            });
        } else if t.is_punct('}') {
            braces.pop();
        } else if t.is_ident("__global__")
            && let Some((mut sig, next)) = parse_definition(&tokens, i + 1)
        {
            let before = &tokens[..i];
            let qualifiers = before.iter().rev().take_while(|t| is_decl_qualifier(t)).count();
            let head = &before[..before.len() - qualifiers];
            sig.c_linkage = braces.contains(&Brace::ExternC) || (head.len() >= 2 && is_extern_c(&head[head.len() - 2..]));
            sig.template_params = template_params(head);
            let names: Vec<&str> = braces.iter().filter_map(|b| if let Brace::Namespace(n) = b { Some(*n) } else { None }).collect();
            sig.namespace = names.join("::");
            // A kernel defined twice (in two `#if` branches) is one kernel; overloads are kept.
            if !kernels.iter().any(|k| k.name == sig.name && k.params == sig.params && k.namespace == sig.namespace) {
                kernels.push(sig);
            }
            i = next;
            continue;
        }
        i += 1;
    }
    kernels
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Brace<'a> {
    ExternC,
    Namespace(&'a str),
    Other,
}

/// Words that may stand between `template <...>` / `extern "C"` and `__global__`.
fn is_decl_qualifier(t: &Token) -> bool {
    t.kind == Kind::Ident && matches!(t.text, "static" | "inline" | "__forceinline__" | "__noinline__" | "__host__" | "__device__")
}

/// `template <typename T, int N>` ending `head` → `typename T, int N`.
fn template_params(head: &[Token]) -> Option<String> {
    if !head.last()?.is_punct('>') {
        return None;
    }
    let mut depth = 0i32;
    for j in (0..head.len()).rev() {
        match head[j].kind {
            Kind::Punct('>') => depth += 1,
            Kind::Punct('<') => {
                depth -= 1;
                if depth == 0 {
                    if j >= 1 && head[j - 1].is_ident("template") {
                        let inner: Vec<&Token> = head[j + 1..head.len() - 1].iter().collect();
                        return Some(join_tokens(&inner));
                    }
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

fn is_extern_c(two: &[Token]) -> bool {
    two[0].is_ident("extern") && two[1].kind == Kind::Str && two[1].text == "\"C\""
}

/// Parses `void [__launch_bounds__(..)] NAME ( params ) {` starting after `__global__`.
/// Returns the signature and the index after the parameter list, or None for a prototype or
/// something we do not understand.
fn parse_definition(tokens: &[Token], start: usize) -> Option<(KernelSignature, usize)> {
    let mut i = start;
    let mut name: Option<&Token> = None;
    while i < tokens.len() {
        let t = &tokens[i];
        if t.is_ident("__launch_bounds__") {
            // __launch_bounds__(MAX_THREADS[, MIN_BLOCKS]) sits between the return type and name.
            i = skip_group(tokens, i + 1)?;
            continue;
        }
        if t.is_punct('(') {
            break;
        }
        if matches!(t.kind, Kind::Punct(';' | '{' | '}' | '=')) {
            return None;
        }
        if t.kind == Kind::Ident {
            name = Some(t);
        }
        i += 1;
    }
    let name = name?;
    let close = skip_group(tokens, i)?; // index after the matching ')'
    // Only a definition counts: `)` then `{` (a prototype ends in `;`).
    if !tokens.get(close).is_some_and(|t| t.is_punct('{')) {
        return None;
    }
    let params = split_params(&tokens[i + 1..close - 1]);
    let sig = KernelSignature {
        name: name.text.to_string(),
        line: name.line,
        params,
        c_linkage: false,
        template_params: None,
        namespace: String::new(),
    };
    Some((sig, close))
}

/// Given the index of an opening `(`, returns the index just after its matching `)`.
fn skip_group(tokens: &[Token], open: usize) -> Option<usize> {
    if !tokens.get(open)?.is_punct('(') {
        return None;
    }
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct('(') => depth += 1,
            Kind::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits a parameter list at top-level commas (commas inside `<...>` or `(...)` belong to a
/// template argument or a function-pointer type).
fn split_params(tokens: &[Token]) -> Vec<Param> {
    let mut params = Vec::new();
    let mut depth = 0i32;
    let mut current: Vec<&Token> = Vec::new();
    for t in tokens {
        match t.kind {
            Kind::Punct('(' | '<' | '[') => depth += 1,
            Kind::Punct(')' | '>' | ']') => depth -= 1,
            Kind::Punct(',') if depth == 0 => {
                params.extend(parse_param(&current));
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(t);
    }
    params.extend(parse_param(&current));
    params
}

const QUALIFIERS: &[&str] = &["const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "register"];

/// Words that build a builtin type: a trailing one is part of the type, not a parameter name.
const TYPE_WORDS: &[&str] = &["void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned"];

/// One parameter from its tokens, e.g. `const float * __restrict__ a` or `int n = 0`.
fn parse_param(tokens: &[&Token]) -> Option<Param> {
    // A default value (`= 0`) is not part of the type.
    let end = tokens.iter().position(|t| t.is_punct('=')).unwrap_or(tokens.len());
    let tokens = &tokens[..end];
    if tokens.is_empty() || (tokens.len() == 1 && tokens[0].is_ident("void")) {
        return None; // `()` or `(void)`
    }
    // The name is the last identifier that is neither a qualifier nor a builtin type word, and
    // that is preceded by some type. An array suffix `[N]` may follow it.
    let name_at = tokens.iter().rposition(|t| t.kind == Kind::Ident).filter(|&p| {
        let w = tokens[p].text;
        let has_type_before = tokens[..p].iter().any(|t| t.kind == Kind::Ident && !QUALIFIERS.contains(&t.text));
        let only_array_after = tokens[p + 1..].iter().all(|t| !matches!(t.kind, Kind::Ident));
        has_type_before && only_array_after && !QUALIFIERS.contains(&w) && !TYPE_WORDS.contains(&w)
    });
    let array = tokens.iter().any(|t| t.is_punct('['));
    let type_tokens: Vec<&Token> = tokens.iter().enumerate().filter(|(k, _)| Some(*k) != name_at).map(|(_, t)| *t).collect();

    let first_star = type_tokens.iter().position(|t| t.is_punct('*'));
    let pointer = first_star.is_some() || array;
    // `const` before the first `*` (or anywhere, for a scalar) qualifies what the kernel reads.
    let value_part = &type_tokens[..first_star.unwrap_or(type_tokens.len())];
    let is_const = value_part.iter().any(|t| t.is_ident("const"));
    let base_words: Vec<&str> =
        value_part.iter().filter(|t| t.kind == Kind::Ident && !QUALIFIERS.contains(&t.text)).map(|t| t.text).collect();

    Some(Param {
        name: name_at.map(|p| tokens[p].text.to_string()).unwrap_or_default(),
        ty: join_tokens(&type_tokens),
        pointer,
        base: normalize_base(&base_words, value_part),
        is_const,
    })
}

/// `unsigned` → `unsigned int`, `signed char` stays, `signed int` → `int`, `long int` → `long`.
/// Template arguments (`Vec<float, 4>`) are kept as written.
fn normalize_base(words: &[&str], value_part: &[&Token]) -> String {
    if value_part.iter().any(|t| t.is_punct('<') || t.is_punct(':')) {
        // A qualified or template type: keep its spelling minus qualifiers.
        let kept: Vec<&Token> = value_part.iter().copied().filter(|t| !(t.kind == Kind::Ident && QUALIFIERS.contains(&t.text))).collect();
        return join_tokens(&kept);
    }
    let builtin = !words.is_empty() && words.iter().all(|w| TYPE_WORDS.contains(w));
    if !builtin {
        return words.join(" ");
    }
    let has = |w: &str| words.contains(&w);
    let longs = words.iter().filter(|w| **w == "long").count();
    let sign = if has("unsigned") { "unsigned " } else { "" };
    let core = if has("char") {
        // `char`, `signed char` and `unsigned char` are three distinct types.
        return if has("signed") { "signed char".into() } else { format!("{sign}char") };
    } else if has("short") {
        "short"
    } else if longs >= 2 {
        "long long"
    } else if longs == 1 && has("double") {
        "long double"
    } else if longs == 1 {
        "long"
    } else if has("float") {
        "float"
    } else if has("double") {
        "double"
    } else if has("bool") {
        "bool"
    } else if has("void") {
        "void"
    } else {
        "int"
    };
    format!("{sign}{core}")
}

/// Joins tokens with single spaces, except around punctuation where C programmers write none:
/// `const float* __restrict__`, `unsigned int[]`, `Vec<float, 4>`.
fn join_tokens(tokens: &[&Token]) -> String {
    let mut out = String::new();
    for t in tokens {
        let glue_left = matches!(t.kind, Kind::Punct('*' | '&' | '[' | ']' | ',' | '>' | ':' | '<'));
        let prev_glues_right = out.ends_with(['[', '<', ':']);
        if !out.is_empty() && !glue_left && !prev_glues_right {
            out.push(' ');
        }
        if t.is_punct(',') {
            out.push_str(", ");
            continue;
        }
        out.push_str(t.text);
    }
    out.replace(",  ", ", ").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(src: &str) -> KernelSignature {
        let k = parse_kernels(src);
        assert_eq!(k.len(), 1, "{k:?}");
        k.into_iter().next().unwrap()
    }

    #[test]
    fn vector_add() {
        let k = one("// c = a + b\n\
             extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n\
             }\n");
        assert_eq!(k.name, "vector_add");
        assert_eq!(k.line, 2);
        let p = &k.params;
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].name.as_str(), p[0].ty.as_str(), p[0].pointer), ("a", "const float*", true));
        assert_eq!((p[0].base.as_str(), p[0].is_const), ("float", true));
        assert_eq!((p[2].name.as_str(), p[2].is_const), ("c", false));
        assert_eq!((p[3].name.as_str(), p[3].ty.as_str(), p[3].pointer), ("n", "int", false));
        assert_eq!(k.to_string(), "vector_add(const float* a, const float* b, float* c, int n)");
    }

    #[test]
    fn restrict_and_spacing() {
        let k = one("extern \"C\" __global__ void k(const float *__restrict__ in, float4 * out) {}");
        assert_eq!(k.params[0].ty, "const float* __restrict__");
        assert_eq!(k.params[0].name, "in");
        assert_eq!(k.params[0].base, "float");
        assert_eq!(k.params[1].ty, "float4*");
        assert_eq!(k.params[1].base, "float4");
    }

    #[test]
    fn builtin_spellings_normalize() {
        let k = one("__global__ void k(unsigned long long* ctr, unsigned n, long int m, signed int s,\n\
                               unsigned char* bytes, const long long unsigned int q, size_t len) {}");
        let bases: Vec<&str> = k.params.iter().map(|p| p.base.as_str()).collect();
        assert_eq!(bases, ["unsigned long long", "unsigned int", "long", "int", "unsigned char", "unsigned long long", "size_t"]);
        let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["ctr", "n", "m", "s", "bytes", "q", "len"]);
        assert!(k.params[5].is_const && !k.params[5].pointer);
    }

    #[test]
    fn const_pointer_is_not_const_pointee() {
        let k = one("__global__ void k(float* const out, const int* const in) {}");
        assert!(!k.params[0].is_const);
        assert!(k.params[1].is_const);
        assert_eq!(k.params[0].ty, "float* const");
    }

    #[test]
    fn arrays_unnamed_void_and_defaults() {
        let k = one("__global__ void k(float a[], int, float x = 1.0f) {}");
        assert_eq!((k.params[0].name.as_str(), k.params[0].pointer), ("a", true));
        assert_eq!(k.params[0].ty, "float[]");
        assert_eq!((k.params[1].name.as_str(), k.params[1].base.as_str()), ("", "int"));
        assert_eq!(k.params[2].name, "x");
        assert!(one("__global__ void k(void) {}").params.is_empty());
        assert!(one("__global__ void k() {}").params.is_empty());
    }

    #[test]
    fn comments_strings_macros_prototypes() {
        let src = r#"
#define KERNEL(x) __global__ void x(int* p) {}
/* __global__ void not_me(int a) {} */
// __global__ void nor_me(int a) {}
extern "C" __global__ void later(float* x, int n);   // a prototype
const char* s = "__global__ void fake(int a) {}";
extern "C" __global__ void
__launch_bounds__(256, 2)
later(float* x, int n)
{
    x[0] = n;
}
"#;
        let k = parse_kernels(src);
        assert_eq!(k.len(), 1, "{k:?}");
        assert_eq!(k[0].name, "later");
        assert_eq!(k[0].line, 9);
        assert_eq!(k[0].params.len(), 2);
    }

    #[test]
    fn several_kernels_and_templates() {
        let src = "template <typename T, int N>\n\
                   __global__ void scale(T* data, Pair<T, N> p) {}\n\
                   extern \"C\" __global__ void a(int* x) {}\n\
                   __device__ float helper(float v) { return v; }\n\
                   extern \"C\" __global__ void b(const gpubook::Vec* v) {}\n";
        let k = parse_kernels(src);
        let names: Vec<&str> = k.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["scale", "a", "b"]);
        assert_eq!(k[0].params.len(), 2);
        assert_eq!(k[0].params[0].base, "T");
        assert_eq!(k[0].params[1].ty, "Pair<T, N>");
        assert_eq!(k[0].params[1].name, "p");
        assert_eq!(k[2].params[0].base, "gpubook::Vec");
        assert_eq!(k[2].line, 5);
    }

    #[test]
    fn c_linkage() {
        let src = "extern \"C\" __global__ void a() {}\n\
                   __global__ void b() {}\n\
                   extern \"C\" {\n __global__ void c(int* p) { if (p) { p[0] = 1; } }\n}\n\
                   __global__ void d() {}\n";
        let k: Vec<(String, bool)> = parse_kernels(src).into_iter().map(|k| (k.name, k.c_linkage)).collect();
        let expect = [("a", true), ("b", false), ("c", true), ("d", false)];
        assert_eq!(k, expect.map(|(n, c)| (n.to_string(), c)));
    }

    #[test]
    fn templates_overloads_namespaces_and_lookup() {
        let src = "template <typename T, int BLOCK>\n__global__ void reduce(const T* in, T* out) {}\n\
                   __global__ void scale(float* x) {}\n__global__ void scale(double* x) {}\n\
                   namespace ops { namespace inner {\nstatic __global__ void fill(int* x) {}\n} }\n\
                   extern \"C\" __global__ void plain(int* x) {}\n";
        let k = parse_kernels(src);
        assert_eq!(k.len(), 5, "{k:?}");
        assert_eq!(k[0].template_params.as_deref(), Some("typename T, int BLOCK"));
        assert_eq!(k[3].qualified_name(), "ops::inner::fill");
        assert!(k[4].c_linkage && k[4].template_params.is_none());

        let expr = |name: &str| match find_kernel(&k, name) {
            Ok(KernelRef::Template { expr, .. } | KernelRef::Cpp { expr, .. }) => expr,
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(expr("reduce<float, 256>"), "reduce<float, 256>");
        assert_eq!(expr("fill"), "ops::inner::fill");
        assert_eq!(expr("ops::inner::fill"), "ops::inner::fill");
        assert!(matches!(find_kernel(&k, "plain"), Ok(KernelRef::CLinkage(s)) if s.name == "plain"));
        let err = |name: &str| find_kernel(&k, name).unwrap_err().to_string();
        let e = err("scale");
        assert!(e.contains("ambiguous") && e.contains("`scale(float* x)`") && e.contains("`scale(double* x)`"), "{e}");
        assert!(err("reduce").contains("template <typename T, int BLOCK>"), "{}", err("reduce"));
        assert!(err("plain<1>").contains("not a template"));
        assert!(err("nope").contains("`reduce`, `scale`, `scale`, `fill`, `plain`"), "{}", err("nope"));
    }

    #[test]
    fn empty_and_garbage_input_do_not_panic() {
        assert!(parse_kernels("").is_empty());
        assert!(parse_kernels("__global__").is_empty());
        assert!(parse_kernels("__global__ void k(int a").is_empty());
        assert!(parse_kernels("__global__ void k(int a))) {").is_empty());
        assert!(parse_kernels("\"unterminated\n'x").is_empty());
        assert!(parse_kernels("/* open comment __global__ void k() {}").is_empty());
    }
}
