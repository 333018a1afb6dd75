//! `{{#exercise ID}}`: an exercise box made from `exercises.toml` and the generated stubs —
//! what to edit and the signatures to complete there, how to check it, what a failing report
//! looks like, the concepts, the hints folded away, and how to see the book's answer once it
//! passes. The catalog is the one list of exercises, so the book also fails when an exercise has
//! no box in its chapter.

use super::play::Listing;
use super::{markers, signatures, wrap};
use anyhow::{anyhow, bail};
use gpubook_course::catalog::{Catalog, Exercise};
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub struct ExerciseBoxes {
    catalog: Catalog,
    /// Chapters not written yet: their exercises need no box.
    drafts: Vec<u32>,
    /// The workspace root (exercises/ and the stub reports are read from it).
    root: PathBuf,
    /// The exercises' runnable kernels (their `run` launches), for the served book.
    pub listings: Arc<Mutex<Vec<Listing>>>,
}

impl ExerciseBoxes {
    pub const NAME: &'static str = "gpubook-exercises";

    pub fn new(catalog: Catalog, drafts: Vec<u32>, root: &Path, listings: Arc<Mutex<Vec<Listing>>>) -> Self {
        ExerciseBoxes { catalog, drafts, root: root.to_path_buf(), listings }
    }

    /// What a box shows beyond the catalog: the stub's signatures and, when one is recorded,
    /// the report an untouched stub gets.
    fn extras(&self, e: &Exercise) -> anyhow::Result<Extras> {
        let others: Vec<&str> = self.catalog.exercises.iter().filter(|o| o.id != e.id).map(|o| o.function.as_str()).collect();
        let signatures = signatures::of_files(&self.root.join("exercises"), &e.files, &e.function, &others)?;
        let report_path = e.stub_report_path(&self.root);
        let stub_report = std::fs::read_to_string(&report_path).ok();
        Ok(Extras { signatures, stub_report, listing: Listing::of_exercise(e, &self.root)? })
    }
}

/// The parts of a box read from files.
#[derive(Debug, Default)]
pub struct Extras {
    pub signatures: Vec<signatures::Signature>,
    pub stub_report: Option<String>,
    /// The kernel's launch, when it has one (its source: the stub in exercises/).
    pub listing: Option<Listing>,
}

impl Preprocessor for ExerciseBoxes {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let mut errors = Vec::new();
        // (exercise id, page) of every box, to find exercises without one.
        let mut boxes: Vec<(String, std::path::PathBuf)> = Vec::new();
        let mut listings = Vec::new();
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let Some(path) = ch.path.clone() else { return };
            let found = match markers::find(&ch.content, &["exercise"]) {
                Ok(m) => m,
                Err(e) => return errors.push(e.context(path.display().to_string())),
            };
            let rendered = markers::replace(&ch.content, &found, |m| {
                m.args.only(1, &[])?;
                let id = m.args.positional(0).ok_or_else(|| anyhow!("names no exercise (`{{{{#exercise ch03-vector-add}}}}`)"))?;
                let e = self.catalog.get(id).ok_or_else(|| anyhow!("no exercise `{id}` in exercises.toml"))?;
                boxes.push((id.to_string(), path.clone()));
                let extras = self.extras(e)?;
                let html = render(e, &extras);
                listings.extend(extras.listing);
                Ok(html)
            });
            match rendered {
                Ok(content) => ch.content = content,
                Err(es) => errors.extend(es.into_iter().map(|e| e.context(format!("book/src/{}", path.display())))),
            }
        });
        for e in self.catalog.exercises.iter().filter(|e| !self.drafts.contains(&e.chapter)) {
            let folder = self.catalog.chapter(e.chapter).map(|c| c.folder.as_str()).unwrap_or_default();
            if !boxes.iter().any(|(id, page)| id == &e.id && page.starts_with(folder)) {
                errors.push(anyhow!(
                    "exercise `{}` (exercises.toml) has no `{{{{#exercise {}}}}}` box on a page under book/src/{folder}/",
                    e.id,
                    e.id
                ));
            }
        }
        if let Some(first) = errors.into_iter().reduce(|all, e| anyhow!("{all:#}\n{e:#}")) {
            bail!("{first:#}");
        }
        *gpubook::sync::lock(&self.listings) = listings;
        Ok(book)
    }
}

/// The box. Hints are Markdown (they use `code`), so each sits between blank lines inside its
/// `<details>`, where mdbook renders it; the rest is HTML, code reflowed to the column.
pub fn render(e: &Exercise, x: &Extras) -> String {
    let files = e.files.iter().map(|f| format!("<code>exercises/{}</code>", esc(f))).collect::<Vec<_>>().join(", ");
    let test = format!("cargo test -p exercises --test {} {}", e.test, e.function);
    let concepts = e.concepts.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" · ");
    let mut out = format!(
        "\n<div class=\"gpubook-exercise\" id=\"exercise-{id}\">\n\
         <div class=\"gpubook-exercise-title\"><span class=\"gpubook-badge\">Exercise</span> {title} <code>{id}</code></div>\n\
         <dl class=\"gpubook-exercise-facts\">\n\
         <dt>Edit</dt><dd>{files}</dd>\n",
        id = esc(&e.id),
        title = esc(&e.title),
    );
    if !x.signatures.is_empty() {
        out += &format!("<dt>Complete</dt><dd class=\"gpubook-signatures\">{}</dd>\n", signatures_html(&x.signatures));
    }
    out += &format!(
        "<dt>Check</dt><dd><code>gpubook check {id}</code> or <code>{test}</code></dd>\n\
         <dt>Concepts</dt><dd>{concepts}</dd>\n\
         <dt>Answer</dt><dd>once it passes, <code>gpubook solution {id}</code> shows the book's, with the lines the exercise asked for highlighted</dd>\n\
         </dl>\n",
        id = esc(&e.id),
        test = esc(&test),
    );
    if let Some(report) = &x.stub_report {
        out += &format!(
            "<details class=\"gpubook-stub-report\"><summary>What a failing report looks like: the untouched stub's</summary>\n<pre><code class=\"language-text\">{}</code></pre>\n</details>\n",
            wrap::preformatted_html(report, wrap::Lang::Text, wrap::BOX_COLUMNS)
        );
    }
    // Every hint but the last: the last one spells out the code, which is the answer, and the
    // page never prints an answer; `gpubook hint` gives it to a learner who asks three times.
    let n = e.hints.len();
    for (i, hint) in e.hints.iter().enumerate().take(n.saturating_sub(1)) {
        let hint = escape_outside_code(hint);
        out += &format!("<details class=\"gpubook-hint\"><summary>Hint {} of {n}</summary>\n\n{hint}\n\n</details>\n", i + 1);
    }
    if n > 0 {
        out += &format!(
            "<p class=\"gpubook-hint-last\">Hint {n} of {n}, which shows the code: <code>gpubook hint {}</code> after the others.</p>\n",
            esc(&e.id)
        );
    }
    out += &run_html(e, x.listing.as_ref());
    // The served book puts a Check button and the report here (src/playground.rs).
    out += &format!("<div class=\"gpubook-check\" data-check=\"{}\"></div>\n", esc(&e.id));
    out + "</div>\n"
}

/// The kernel's editor with Run, served (src/play.rs's listing, its source the stub: never
/// the answer); in the static book, how to run it locally. A kernel that cannot run alone says
/// why.
fn run_html(e: &Exercise, listing: Option<&Listing>) -> String {
    if let Some(l) = listing {
        return format!(
            "<div class=\"gpubook-play gpubook-exercise-run\" data-play=\"{id}\" data-source=\"{src}\">\n\
             <div class=\"gpubook-play-title\">Try the kernel: <code>{kernel}&lt;&lt;&lt;{grid}, {block}&gt;&gt;&gt;</code> on \
             the page's buffers, starting from the stub</div>\n\
             <p class=\"gpubook-play-local\">Served (<code>gpubook book --serve</code>), this is an editor with a Run \
             button: it shows the diagnostics, the buffers and which elements the launch wrote. Locally, on your file: \
             <code>{cmd}</code></p>\n</div>\n",
            id = esc(&l.id),
            src = esc(&l.source).replace('\n', "&#10;"),
            kernel = esc(&l.kernel),
            grid = esc(&dims(&l.grid)),
            block = esc(&dims(&l.block)),
            cmd = esc(&l.command()),
        );
    }
    match &e.no_run {
        Some(why) => format!(
            "<p class=\"gpubook-exercise-norun\">No Run button for this kernel: {}. <code>gpubook check {}</code> runs it \
             with its grader.</p>\n",
            esc(why),
            esc(&e.id)
        ),
        None => String::new(),
    }
}

/// `4` as it is, `3,2` as CUDA C's `(3, 2)`.
fn dims(d: &str) -> String {
    if d.contains(',') { format!("({})", d.split(',').map(str::trim).collect::<Vec<_>>().join(", ")) } else { d.to_string() }
}

/// Each signature under the file it is in: its summary as a comment, then the declaration.
fn signatures_html(sigs: &[signatures::Signature]) -> String {
    sigs.iter()
        .map(|s| {
            let marker = if s.lang == "rust" { "///" } else { "//" };
            let code = match &s.summary {
                Some(sum) => format!("{marker} {sum}\n{}", s.declaration),
                None => s.declaration.clone(),
            };
            let lang = if s.lang == "rust" { wrap::Lang::Rust } else { wrap::Lang::C };
            format!(
                "<div class=\"gpubook-signature-file\"><code>{}</code></div><pre><code class=\"language-{}\">{}</code></pre>",
                esc(&s.file),
                s.lang,
                wrap::preformatted_html(&code, lang, wrap::BOX_COLUMNS)
            )
        })
        .collect()
}

/// A hint's text with `<`, `>` and `&` escaped outside `code` spans: hints are prose, and a bare
/// `alloc_zeros::<f32>(n)` must not become an HTML tag.
fn escape_outside_code(s: &str) -> String {
    s.split('`').enumerate().map(|(i, part)| if i % 2 == 1 { part.to_string() } else { esc(part) }).collect::<Vec<_>>().join("`")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise() -> Exercise {
        Exercise {
            id: "ch03-vector-add".into(),
            chapter: 3,
            title: "Vector add".into(),
            files: vec!["src/ch03.rs".into(), "kernels/ch03/vector_add.cu".into()],
            test: "ch03".into(),
            function: "vector_add".into(),
            answers: vec![],
            concepts: vec!["the boundary guard".into()],
            hints: vec!["Use `if (i < n)`.".into(), "Then alloc_zeros::<f32>(n) & `Vec<f32>`.".into()],
            run: None,
            no_run: None,
        }
    }

    #[test]
    fn the_box_has_everything_a_learner_needs() {
        let sig = signatures::Signature {
            file: "exercises/src/ch03.rs".into(),
            summary: Some("c = a + b.".into()),
            declaration: "pub fn vector_add(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> { ... }".into(),
            lang: "rust",
        };
        let x = Extras {
            signatures: vec![sig],
            stub_report: Some("FAIL ch03-vector-add\n\nnot yet implemented: <copy a>".into()),
            listing: None,
        };
        let html = render(&exercise(), &x);
        assert!(
            html.contains("<code>exercises/src/ch03.rs</code></div><pre><code class=\"language-rust\">/// c = a + b.\npub fn vector_add(")
        );
        assert!(html.contains("<summary>What a failing report looks like"));
        assert!(html.contains("FAIL ch03-vector-add\n&#160;\nnot yet implemented: &lt;copy a&gt;"), "{html}");
        assert!(html.contains("<code>gpubook solution ch03-vector-add</code>"));
        assert!(!render(&exercise(), &Extras::default()).contains("failing report"));
        assert!(html.contains("id=\"exercise-ch03-vector-add\""));
        assert!(html.contains("<code>exercises/kernels/ch03/vector_add.cu</code>"));
        assert!(html.contains("<code>gpubook check ch03-vector-add</code>"));
        assert!(html.contains("cargo test -p exercises --test ch03 vector_add"));
        assert!(html.contains("<summary>Hint 1 of 2</summary>\n\nUse `if (i < n)`.\n\n</details>"));
        assert!(html.contains("the boundary guard"));
        // The last hint spells out the code: only `gpubook hint` gives it.
        assert!(!html.contains("alloc_zeros"), "{html}");
        assert!(html.contains("Hint 2 of 2, which shows the code: <code>gpubook hint ch03-vector-add</code>"));
    }
}

/// The catalog's `run` launches against the kernels they name.
#[cfg(test)]
mod run_tests {
    use super::*;
    use gpubook_labs::launch_spec::parse_launch;

    /// The parameters of `__global__ ... name(...)` in `text`, as written, when it defines one.
    fn parameters(text: &str, name: &str) -> Option<Vec<String>> {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = flat.find(&format!(" {name}("))?;
        if !flat[..at].rsplit(';').next()?.contains("__global__") {
            return None;
        }
        let params = &flat[at + name.len() + 2..];
        let params = &params[..params.find(')')?];
        Some(if params.trim().is_empty() { vec![] } else { params.split(',').map(|p| p.trim().to_string()).collect() })
    }

    /// Where a launch's arguments and the kernel's parameters disagree on peer tables: a
    /// `T* const*` parameter takes `peers:`, and only it does.
    fn peer_mismatches(params: &[String], args: &[String]) -> Vec<String> {
        params
            .iter()
            .zip(args)
            .filter(|(p, a)| (p.matches('*').count() >= 2) != a.starts_with("peers:"))
            .map(|(p, a)| format!("`{a}` for `{p}`"))
            .collect()
    }

    #[test]
    fn parameters_are_counted_in_global_functions_only() {
        let text = "__device__ int f(int a);\nextern \"C\" __global__ void\nk(const float* x,\n  int n) {}";
        assert_eq!(parameters(text, "k").map(|p| p.len()), Some(2));
        assert_eq!(parameters(text, "f"), None);
        let p = vec!["int* const* inbox".to_string(), "int rank".to_string()];
        assert!(peer_mismatches(&p, &["peers:@x".into(), "i32=rank".into()]).is_empty());
        assert_eq!(peer_mismatches(&p, &["i32[2]:zeros".into(), "i32=rank".into()]).len(), 1);
        assert_eq!(parameters(text, "g"), None);
    }

    #[test]
    fn every_kernel_exercise_declares_a_launch_or_why_not_and_each_launch_fits_its_kernel() {
        let root = gpubook::paths::root();
        let catalog = Catalog::load(&root).unwrap();
        let mut problems = Vec::new();
        for e in &catalog.exercises {
            let has_kernel = e.files.iter().any(|f| f.ends_with(".cu"));
            if has_kernel != (e.run.is_some() || e.no_run.is_some()) {
                problems.push(format!("{}: a kernel file needs `run` or `no_run`, and only a kernel file", e.id));
            }
            let Some(launch) = e.launch() else { continue };
            let launch = match launch {
                Ok(l) => l,
                Err(err) => {
                    problems.push(format!("{err:#}"));
                    continue;
                }
            };
            let mut kernels = vec![(launch.kernel.clone(), launch.args.clone())];
            for t in &launch.then {
                let l = parse_launch(t, Path::new(".")).unwrap();
                let args = t.split_whitespace().skip(1).filter(|w| !["grid=", "block=", "shared="].iter().any(|k| w.starts_with(k)));
                kernels.push((l.kernel, args.map(str::to_string).collect()));
            }
            let peers = kernels.iter().flat_map(|k| &k.1).any(|a| a.starts_with("peers:") || a.ends_with("=rank"));
            if peers && launch.ranks < 2 {
                problems.push(format!("{}: a launch with peer tables or `=rank` shows little with one rank: give --ranks", e.id));
            }
            for side in ["solutions", "exercises"] {
                let text = std::fs::read_to_string(root.join(side).join(&launch.file)).unwrap();
                for (kernel, args) in &kernels {
                    match parameters(&text, kernel) {
                        Some(p) if p.len() == args.len() => {
                            for m in peer_mismatches(&p, args) {
                                problems.push(format!("{}: {kernel}: {m}: a `T* const*` parameter takes `peers:`, and only it", e.id));
                            }
                        }
                        Some(p) => problems.push(format!("{}: {kernel} takes {} parameters, the run gives {}", e.id, p.len(), args.len())),
                        None => problems.push(format!("{}: no __global__ {kernel} in {side}/{}", e.id, launch.file)),
                    }
                }
            }
        }
        assert!(problems.is_empty(), "exercises.toml:\n{}", problems.join("\n"));
    }

    #[test]
    fn a_runnable_box_has_the_stub_and_a_local_command_and_never_the_answer() {
        let root = gpubook::paths::root();
        let catalog = Catalog::load(&root).unwrap();
        let e = catalog.get("ch03-vector-add").unwrap();
        let listing = Listing::of_exercise(e, &root).unwrap().expect("vector add has a run");
        let stub = std::fs::read_to_string(root.join("exercises/kernels/ch03/vector_add.cu")).unwrap();
        let stub_line = stub.lines().find(|l| l.contains("TODO")).expect("the stub has a TODO");
        let html = render(e, &Extras { listing: Some(listing), ..Extras::default() });
        assert!(html.contains("data-play=\"ch03-vector-add\""), "{html}");
        assert!(html.contains(&esc(stub_line.trim())), "the editor starts from the stub");
        assert!(!html.contains("blockIdx.x * blockDim.x + threadIdx.x"), "the answer is on the page: {html}");
        assert!(html.contains("gpubook run exercises/kernels/ch03/vector_add.cu --kernel vector_add --grid 4 --block 256"));
        let mut cannot = e.clone();
        (cannot.run, cannot.no_run) = (None, Some("it needs the host's three launches".into()));
        let html = render(&cannot, &Extras::default());
        assert!(html.contains("No Run button for this kernel: it needs the host's three launches"), "{html}");
        assert!(!html.contains("data-play"));
        // Several ranks: the local command says so.
        let dispatch = catalog.get("ch12-dispatch").unwrap();
        let listing = Listing::of_exercise(dispatch, &root).unwrap().expect("dispatch has a run");
        assert!(listing.command().contains(" --ranks 2 "), "{}", listing.command());
    }
}
