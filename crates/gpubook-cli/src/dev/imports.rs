//! The module import graph of every crate in the workspace, and the tests that keep it free of
//! loops: a module that reaches itself through other modules cannot be read, tested or changed
//! one piece at a time (issue 10 found a ten-file loop in `gpu/`). `gpu/` is also checked
//! against its layers (see `gpu/mod.rs`), so that an import pointing up fails even before it
//! closes a loop.
//!
//! The graph is read from the sources, not from the compiler: every `crate::`, `super::` and
//! `self::` path (in `use` declarations and in code), every path through a child module or an
//! imported name (`use crate::schedules;` then `schedules::zb1p::generate()`), followed through
//! re-exports (`pub use`) and imports to the file that defines the item. `mod`
//! declarations are structure, not edges, and so is a module re-exporting its own submodules
//! (`pub use child::X` in a mod.rs): that is their facade, not a use of them, so children may
//! use what their parent defines.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;

/// A module's path below its crate root: `[]` for lib.rs or main.rs, `["gpu", "context"]` for
/// gpu/context.rs.
type ModPath = Vec<String>;

/// One edge: `from` names something `to` defines, at `line` of `from`, through `path`.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub line: u32,
    pub path: String,
}

/// The files of one crate's src/ (paths relative to it) and the edges between them.
#[derive(Debug, Default)]
pub struct Graph {
    pub files: BTreeSet<String>,
    pub edges: Vec<Edge>,
}

impl Graph {
    /// Reads every .rs file below `src`.
    pub fn of_src(src: &Path) -> std::io::Result<Graph> {
        let mut sources = BTreeMap::new();
        for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
            let entry = entry?;
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).expect("below src").to_string_lossy().replace('\\', "/");
                sources.insert(rel, std::fs::read_to_string(path)?);
            }
        }
        Ok(Graph::of_sources(&sources))
    }

    /// The graph of in-memory sources, keyed by path relative to src/ (`gpu/context.rs`).
    pub fn of_sources(sources: &BTreeMap<String, String>) -> Graph {
        let mut modules: HashMap<ModPath, Module> = HashMap::new();
        let mut refs = Vec::new();
        for (file, text) in sources {
            scan(file, text, &mut modules, &mut refs);
        }
        // Imports first: a path through a re-export resolves only once every `use` is known.
        for r in &refs {
            let Some(abs) = (Resolver { modules: &modules }).absolute(&r.scope, &r.segments) else { continue };
            let module = modules.entry(r.scope.clone()).or_default();
            if r.glob {
                module.globs.push(abs);
            } else if let Some(name) = &r.binds {
                module.imports.insert(name.clone(), abs);
            }
        }
        let resolver = Resolver { modules: &modules };
        let mut edges = Vec::new();
        for r in refs {
            let Some(abs) = resolver.absolute(&r.scope, &r.segments) else { continue };
            if r.public && abs.len() > r.scope.len() && abs.starts_with(&r.scope) {
                continue; // a facade re-exporting its own submodule
            }
            if let Some(to) = resolver.locate(&abs, 0)
                && to != r.file
            {
                edges.push(Edge { from: r.file, to, line: r.line, path: r.segments.join("::") });
            }
        }
        Graph { files: sources.keys().cloned().collect(), edges }
    }

    /// Each distinct (from, to) pair once, with the first line that makes it.
    pub fn arrows(&self) -> BTreeMap<(String, String), &Edge> {
        let mut out = BTreeMap::new();
        for e in &self.edges {
            out.entry((e.from.clone(), e.to.clone())).or_insert(e);
        }
        out
    }

    /// The same graph one level up: each file stands for its top-level folder under src/ (`gpu`
    /// for gpu/context.rs; a file at the root stands for itself, `catalog.rs`), and only arrows
    /// between two of them are kept, each naming the file and line that make it.
    pub fn folders(&self) -> Graph {
        let folder = |f: &str| f.split_once('/').map_or(f.to_string(), |(d, _)| d.to_string());
        let files = self.files.iter().map(|f| folder(f)).collect();
        let edges = self
            .edges
            .iter()
            .filter(|e| folder(&e.from) != folder(&e.to))
            .map(|e| Edge { from: folder(&e.from), to: folder(&e.to), line: e.line, path: format!("{} in {}", e.path, e.from) })
            .collect();
        Graph { files, edges }
    }

    /// Each group of files that reach each other, with one (shortest) loop through the first.
    pub fn cycles(&self) -> Vec<Loop> {
        let arrows = self.arrows();
        let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (from, to) in arrows.keys() {
            next.entry(from).or_default().push(to);
        }
        strongly_connected(&self.files, &next)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let path = shortest_loop(group[0], &group, &next);
                let edges = path.windows(2).map(|w| arrows[&(w[0].to_string(), w[1].to_string())].clone()).collect();
                Loop { files: group.iter().map(|f| f.to_string()).collect(), edges }
            })
            .collect()
    }
}

/// Files that reach each other through their imports, and one loop among them.
#[derive(Debug, Clone)]
pub struct Loop {
    pub files: Vec<String>,
    pub edges: Vec<Edge>,
}

/// The group, then the loop as the lines that close it.
pub fn describe(l: &Loop) -> String {
    let mut out = format!("  {} files reach each other: {}\n", l.files.len(), l.files.join(", "));
    let names: Vec<&str> = l.edges.iter().map(|e| e.from.as_str()).chain(l.edges.first().map(|e| e.from.as_str())).collect();
    out.push_str(&format!("  one loop: {}\n", names.join(" -> ")));
    for e in &l.edges {
        out.push_str(&format!("    {}:{} uses {} (defined in {})\n", e.from, e.line, e.path, e.to));
    }
    out
}

#[derive(Debug, Default)]
struct Module {
    file: String,
    /// Names brought in by `use` (any visibility): name -> absolute path of what it names.
    imports: HashMap<String, ModPath>,
    /// `use x::*`: absolute module paths.
    globs: Vec<ModPath>,
    /// Items defined here (`struct`, `fn`, ...), which a glob import may reach.
    items: BTreeSet<String>,
}

/// A path the source names, to resolve once every module is known.
struct Ref {
    file: String,
    /// The module the path is written in (inline modules included).
    scope: ModPath,
    segments: Vec<String>,
    line: u32,
    /// From a `use` declaration: the name it brings in (`None` for `as _` and globs).
    binds: Option<String>,
    glob: bool,
    /// A `pub` (or `pub(..)`) `use`.
    public: bool,
}

fn module_path(file: &str) -> ModPath {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// Tokens of `text` with comments, strings and character literals taken out.
struct Tok {
    text: String,
    line: u32,
}

fn tokenize(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let (mut i, mut line, mut out) = (0, 1u32, Vec::new());
    // Skips a "..." string starting at the quote at `i`; returns the index after it.
    let skip_string = |mut i: usize, line: &mut u32| {
        i += 1;
        while i < c.len() && c[i] != '"' {
            if c[i] == '\\' {
                i += 1;
            }
            if at(i) == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i + 1
    };
    // Skips a raw string whose `#`s (or quote) start at `i`.
    let skip_raw = |mut i: usize, line: &mut u32| {
        let mut hashes = 0;
        while at(i) == '#' {
            hashes += 1;
            i += 1;
        }
        i += 1; // the opening quote
        while i < c.len() {
            if c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                return i + 1 + hashes;
            }
            if c[i] == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                } else if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(i, &mut line);
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\'') or a lifetime / label ('a).
            if at(i + 1) == '\\' {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' || (ch == '$' && (at(i + 1).is_alphabetic())) {
            let start = i;
            i += 1;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            match (word.as_str(), at(i)) {
                ("r" | "br" | "cr", '"') => i = skip_raw(i, &mut line),
                ("r" | "br" | "cr", '#') if at(i + 1) == '#' || at(i + 1) == '"' => i = skip_raw(i, &mut line),
                ("b" | "c", '"') => i = skip_string(i, &mut line),
                ("b", '\'') => {
                    i += if at(i + 1) == '\\' { 4 } else { 3 };
                    while i < c.len() && c[i - 1] != '\'' {
                        i += 1;
                    }
                }
                ("r", '#') => {} // a raw identifier: the next word is the name
                _ => out.push(Tok { text: word, line }),
            }
        } else if ch.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Tok { text: "::".into(), line });
            i += 2;
        } else {
            out.push(Tok { text: ch.to_string(), line });
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

/// Finds the modules `file` defines (itself and inline `mod x { }`) and every path it names.
fn scan(file: &str, text: &str, modules: &mut HashMap<ModPath, Module>, refs: &mut Vec<Ref>) {
    let toks = tokenize(text);
    let base = module_path(file);
    modules.entry(base.clone()).or_default().file = file.to_string();
    let t = |i: usize| toks.get(i).map(|t| t.text.as_str()).unwrap_or("");
    // Inline modules open at a brace depth: (name, depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let scope = || base.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect::<ModPath>();
        match t(i) {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "mod" if is_ident(t(i + 1)) && t(i + 2) == "{" => {
                let name = t(i + 1).to_string();
                let mut path = scope();
                path.push(name.clone());
                modules.entry(path).or_default().file = file.to_string();
                inline.push((name, depth + 1));
                depth += 1;
                i += 3;
                continue;
            }
            "struct" | "enum" | "union" | "trait" | "type" | "fn" | "const" | "static" if is_ident(t(i + 1)) => {
                modules.entry(scope()).or_default().items.insert(t(i + 1).to_string());
            }
            "use" if t(i + 1) != "<" && t(i.wrapping_sub(1)) != "::" => {
                let mut entries = Vec::new();
                let mut pos = i + 1;
                if t(pos) != "::" {
                    use_tree(&toks, &mut pos, Vec::new(), &mut entries);
                }
                let scope = scope();
                let public = t(i.wrapping_sub(1)) == "pub"
                    || (t(i.wrapping_sub(1)) == ")" && {
                        let open = (0..i).rev().find(|&k| t(k) == "(");
                        open.is_some_and(|k| t(k.wrapping_sub(1)) == "pub")
                    });
                for (segments, binds, glob, line) in entries {
                    refs.push(Ref { file: file.to_string(), scope: scope.clone(), segments, line, binds, glob, public });
                }
                while pos < toks.len() && t(pos) != ";" {
                    pos += 1;
                }
                i = pos + 1;
                continue;
            }
            // A path: from `crate`, `super` or `self`, or from a name (an imported module or item,
            // a child module; other names, `std::` and `Vec::new` alike, resolve to nothing).
            word if is_ident(word) && t(i + 1) == "::" && is_ident(t(i + 2)) && !matches!(t(i.wrapping_sub(1)), "::" | ".") => {
                let line = toks[i].line;
                let mut segments = vec![t(i).trim_start_matches('$').to_string()];
                let mut pos = i + 1;
                // A macro's `$crate::grade::$chapter` names `grade`: `$chapter` is the caller's.
                while t(pos) == "::" && is_ident(t(pos + 1)) && !t(pos + 1).starts_with('$') {
                    segments.push(t(pos + 1).to_string());
                    pos += 2;
                }
                refs.push(Ref { file: file.to_string(), scope: scope(), segments, line, binds: None, glob: false, public: false });
                i = pos;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// One `use` tree: `a::b::{c, d::e as f, self, *}`. Entries are (path, name bound, glob, line).
fn use_tree(toks: &[Tok], pos: &mut usize, mut prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>, bool, u32)>) {
    let t = |i: usize| toks.get(i).map(|t| t.text.as_str()).unwrap_or("");
    loop {
        let line = toks.get(*pos).map_or(0, |t| t.line);
        match t(*pos) {
            "{" => {
                *pos += 1;
                while *pos < toks.len() && t(*pos) != "}" {
                    use_tree(toks, pos, prefix.clone(), out);
                    if t(*pos) == "," {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            "*" => {
                *pos += 1;
                out.push((prefix, None, true, line));
                return;
            }
            word if is_ident(word) => {
                prefix.push(word.to_string());
                *pos += 1;
                if t(*pos) == "::" {
                    *pos += 1;
                    continue;
                }
                if prefix.last().is_some_and(|s| s == "self") {
                    prefix.pop();
                }
                let mut binds = prefix.last().cloned();
                if t(*pos) == "as" {
                    binds = Some(t(*pos + 1).to_string()).filter(|n| n != "_");
                    *pos += 2;
                }
                out.push((prefix, binds, false, line));
                return;
            }
            _ => return,
        }
    }
}

struct Resolver<'a> {
    modules: &'a HashMap<ModPath, Module>,
}

impl Resolver<'_> {
    /// The absolute module path a path written in `scope` names; `None` outside the crate.
    fn absolute(&self, scope: &ModPath, segments: &[String]) -> Option<ModPath> {
        let (first, rest) = segments.split_first()?;
        let mut abs = match first.as_str() {
            "crate" => Vec::new(),
            "self" => scope.clone(),
            "super" => {
                let mut s = scope.clone();
                s.pop()?;
                s
            }
            _ => {
                // Relative: a child module of the scope, or a name the scope imports; anything
                // else is outside the crate (or local, and no edge).
                let mut child = scope.clone();
                child.push(first.clone());
                if self.modules.contains_key(&child) { child } else { self.modules.get(scope)?.imports.get(first)?.clone() }
            }
        };
        let mut rest = rest.iter().peekable();
        while rest.peek().is_some_and(|s| *s == "super") {
            abs.pop()?;
            rest.next();
        }
        abs.extend(rest.cloned());
        Some(abs)
    }

    /// The file that defines what `abs` names, following imports and re-exports.
    fn locate(&self, abs: &[String], hops: usize) -> Option<String> {
        if hops > 16 {
            return None;
        }
        let k = (0..=abs.len()).rev().find(|&k| self.modules.contains_key(&abs[..k]))?;
        let module = &self.modules[&abs[..k]];
        let Some(name) = abs.get(k) else { return Some(module.file.clone()) };
        if let Some(target) = module.imports.get(name) {
            let mut next = target.clone();
            next.extend(abs[k + 1..].iter().cloned());
            return self.locate(&next, hops + 1);
        }
        for g in &module.globs {
            let mut candidate = g.clone();
            candidate.push(name.clone());
            let known = self.modules.contains_key(&candidate)
                || self.modules.get(g).is_some_and(|m| m.imports.contains_key(name) || m.items.contains(name));
            if known {
                candidate.extend(abs[k + 1..].iter().cloned());
                return self.locate(&candidate, hops + 1);
            }
        }
        Some(module.file.clone())
    }
}

fn strongly_connected<'a>(files: &'a BTreeSet<String>, next: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    // Tarjan's algorithm; the graphs are small, so recursion depth is no concern.
    struct State<'a> {
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        groups: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(v: &'a str, next: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in next.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(w, next, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w);
                if w == v {
                    break;
                }
            }
            group.sort();
            s.groups.push(group);
        }
    }
    let mut s = State { index: HashMap::new(), low: HashMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), groups: Vec::new() };
    for f in files {
        if !s.index.contains_key(f.as_str()) {
            visit(f, next, &mut s);
        }
    }
    s.groups
}

/// The shortest path from `start` back to itself inside `group`: [start, .., start].
fn shortest_loop<'a>(start: &'a str, group: &[&'a str], next: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<&'a str> {
    let mut came_from: HashMap<&str, &str> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in next.get(v).into_iter().flatten().filter(|w| group.contains(w)) {
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while at != start {
                    at = came_from[at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start, start]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// `gpu/`'s layers, bottom first: a file may use files of its own layer or below, never above
    /// (mod.rs, the facade, sits on top). Every file of gpu/ must be listed.
    const GPU_LAYERS: &[(&str, &[&str])] = &[
        (
            "plain types and ids",
            &[
                "error.rs",
                "ids.rs",
                "info.rs",
                "limits.rs",
                "occupancy.rs",
                "repr.rs",
                "module.rs",
                "trace.rs",
                "toolkit.rs",
                "warnings.rs",
            ],
        ),
        ("the backend seam", &["backend.rs", "cuda.rs", "emu.rs", "select.rs"]),
        ("the context", &["ordering.rs", "context.rs"]),
        ("memory, streams, events", &["memory.rs", "strided.rs", "host.rs", "mapped.rs", "event.rs", "stream.rs"]),
        ("launch and module loading", &["function.rs", "global.rs", "launch.rs"]),
        ("the facade", &["mod.rs"]),
    ];

    /// src/ of every workspace member.
    fn workspace_srcs() -> Vec<PathBuf> {
        let root = gpubook::paths::root();
        let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
        let members = manifest["workspace"]["members"].as_array().expect("workspace.members");
        members.iter().map(|m| root.join(m.as_str().expect("a path")).join("src")).collect()
    }

    fn sources(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect()
    }

    #[test]
    fn no_crate_has_an_import_loop() {
        let mut report = String::new();
        let srcs = workspace_srcs();
        assert!(srcs.len() >= 5, "found only {srcs:?}");
        for src in srcs {
            let graph = Graph::of_src(&src).unwrap();
            assert!(graph.files.len() > 1 || src.ends_with("exercises/src"), "no sources read under {}", src.display());
            for cycle in graph.cycles() {
                report.push_str(&format!("{}:\n{}", src.display(), describe(&cycle)));
            }
        }
        assert!(report.is_empty(), "modules that import each other (split out what both need, or move the impl up):\n{report}");
    }

    /// One level up from `no_crate_has_an_import_loop`: a crate's top-level folders (and root
    /// files) must not reach each other in a loop either, or the folder names would not say
    /// which part stands on which.
    #[test]
    fn no_crate_has_a_loop_between_its_folders() {
        let mut report = String::new();
        for src in workspace_srcs() {
            for cycle in Graph::of_src(&src).unwrap().folders().cycles() {
                report.push_str(&format!("{}:\n{}", src.display(), describe(&cycle)));
            }
        }
        assert!(report.is_empty(), "folders that import each other (move what both need below both):\n{report}");
    }

    #[test]
    fn a_loop_between_folders_is_found_through_their_files() {
        let graph = Graph::of_sources(&sources(&[
            ("lib.rs", "mod ep; mod viz; mod rng;"),
            ("ep/mod.rs", "mod moe;"),
            ("ep/moe.rs", "use crate::viz::label;\npub struct Routing;"),
            ("viz/mod.rs", "mod ep;\npub fn label() {}"),
            ("viz/ep.rs", "fn f(_: crate::ep::moe::Routing) {}"),
            ("rng.rs", "pub struct Rng;"),
        ]));
        assert!(graph.cycles().is_empty(), "no loop between files");
        let loops = graph.folders().cycles();
        assert_eq!(loops.len(), 1, "{loops:?}");
        let text = describe(&loops[0]);
        assert!(text.contains("2 files reach each other: ep, viz"), "{text}");
        assert!(text.contains("in viz/ep.rs"), "the file that makes the arrow is named: {text}");
    }

    #[test]
    fn gpu_modules_import_only_their_layer_or_below() {
        let graph = Graph::of_src(&gpubook::paths::root().join("crates/gpubook/src")).unwrap();
        let layer_of = |file: &str| {
            let name = file.strip_prefix("gpu/")?;
            GPU_LAYERS.iter().position(|(_, files)| files.contains(&name))
        };
        let mut problems = Vec::new();
        for f in graph.files.iter().filter(|f| f.starts_with("gpu/")) {
            if layer_of(f).is_none() {
                problems.push(format!("{f} has no layer: add it to GPU_LAYERS (and gpu/mod.rs's comment)"));
            }
        }
        let arrows = graph.arrows();
        for ((from, to), e) in &arrows {
            if let (Some(a), Some(b)) = (layer_of(from), layer_of(to))
                && b > a
            {
                problems.push(format!(
                    "{from}:{} uses {} from {to}: {} must not reach up to {}",
                    e.line, e.path, GPU_LAYERS[a].0, GPU_LAYERS[b].0
                ));
            }
        }
        // The picture docs/architecture.md draws, printed for `--nocapture`.
        for (name, files) in GPU_LAYERS {
            println!("{name}:");
            for f in *files {
                let from = format!("gpu/{f}");
                let uses: Vec<&str> =
                    arrows.keys().filter(|(a, b)| *a == from && b.starts_with("gpu/")).map(|(_, b)| &b["gpu/".len()..]).collect();
                println!("  {f:<12} -> {}", if uses.is_empty() { "-".to_string() } else { uses.join(", ") });
            }
        }
        assert!(problems.is_empty(), "gpu/ imports against its layers:\n  {}", problems.join("\n  "));
    }

    #[test]
    fn a_loop_is_found_and_named_with_its_lines() {
        let graph = Graph::of_sources(&sources(&[
            ("lib.rs", "mod a; mod b; mod c;\npub use a::A;"),
            ("a.rs", "use crate::b::B;\npub struct A(B);"),
            ("b.rs", "// use crate::a::A; (a comment is no edge)\npub struct B;\nfn f() -> super::c::C { todo!() }"),
            ("c.rs", "pub struct C;\nfn g(_: &crate::A) {}"),
        ]));
        // Through an imported module: `use crate::gen;` then `gen::one::make()`.
        let through_import = Graph::of_sources(&sources(&[
            ("lib.rs", "mod kind; mod gen;"),
            ("kind.rs", "use crate::gen;\nfn f() { gen::one::make(); }"),
            ("gen/mod.rs", "pub mod one;"),
            ("gen/one.rs", "pub fn make() { let _ = crate::kind::f; }"),
        ]));
        let text: Vec<String> = through_import.cycles().iter().map(describe).collect();
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(text[0].contains("kind.rs:2 uses gen::one::make (defined in gen/one.rs)"), "{text:?}");
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        let text = describe(&cycles[0]);
        assert!(text.contains("3 files reach each other: a.rs, b.rs, c.rs"), "{text}");
        assert!(text.contains("one loop: a.rs -> b.rs -> c.rs -> a.rs"), "{text}");
        assert!(text.contains("c.rs:2 uses crate::A (defined in a.rs)"), "a re-export is followed to its file: {text}");
        assert!(text.contains("b.rs:3 uses super::c::C"), "{text}");
    }

    #[test]
    fn groups_globs_renames_inline_modules_and_strings() {
        let graph = Graph::of_sources(&sources(&[
            ("lib.rs", "pub mod gpu;"),
            (
                "gpu/mod.rs",
                "mod ids; mod ctx; mod stream;\npub use ids::{Id as BufferId, *};\npub mod probe { pub use super::ctx::open as cuda; }",
            ),
            ("gpu/ids.rs", "pub type Id = u64;\npub struct Other;"),
            ("gpu/ctx.rs", "use super::{BufferId, Other};\npub fn open() {}\n#[cfg(test)] mod tests { use super::*; }"),
            (
                "gpu/stream.rs",
                "fn f() { let s = \"crate::gpu::ctx::open\"; let c = 'x'; crate::gpu::probe::cuda(); }\nfn g<'a>(_: &'a super::ids::Id) {}",
            ),
        ]));
        let arrows: Vec<(String, String)> = graph.arrows().into_keys().collect();
        let has = |a: &str, b: &str| arrows.contains(&(a.to_string(), b.to_string()));
        assert!(has("gpu/ctx.rs", "gpu/ids.rs"), "{arrows:?}");
        assert!(has("gpu/stream.rs", "gpu/ctx.rs"), "an inline module's re-export is followed: {arrows:?}");
        assert!(has("gpu/stream.rs", "gpu/ids.rs"), "{arrows:?}");
        assert!(has("gpu/mod.rs", "gpu/ctx.rs"), "an inline module's re-export of a sibling counts: {arrows:?}");
        assert!(!has("gpu/mod.rs", "gpu/ids.rs"), "a facade's re-export of its child does not: {arrows:?}");
        assert!(!has("gpu/ctx.rs", "gpu/mod.rs") && !has("gpu/stream.rs", "gpu/mod.rs"), "{arrows:?}");
        assert_eq!(arrows.len(), 4, "{arrows:?}");
        assert!(graph.cycles().is_empty());
    }

    /// The crates that follow gpubook::sync's lock policy (the emulator has its own lock calls,
    /// which follow the same policy by hand).
    const LOCKING_CRATES: [&str; 4] =
        ["crates/gpubook/src", "crates/gpubook-labs/src", "crates/gpubook-course/src", "crates/gpubook-book/src"];

    /// gpubook::sync's policy holds wherever gpubook and the crates above it lock.
    #[test]
    fn no_lock_unwraps_a_poisoned_lock() {
        let root = gpubook::paths::root();
        let mut found = Vec::new();
        for krate in LOCKING_CRATES {
            for entry in walkdir::WalkDir::new(root.join(krate)) {
                let path = entry.unwrap().into_path();
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("crates/gpubook/src/sync.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    let squeezed: String = line.split_whitespace().collect();
                    if [".lock().unwrap()", ".lock().expect(", ".read().unwrap()", ".write().unwrap()"].iter().any(|p| squeezed.contains(p))
                    {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(found.is_empty(), "lock with gpubook::sync::lock (see its docs):\n{}", found.join("\n"));
    }
}
