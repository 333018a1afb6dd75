//! `{{#figure ...}}` and `{{#run ...}}`: outputs made at build time (see [`super::outputs`] for the
//! kinds), or recorded on a GPU ([`super::recorded`]), each captioned with what produced it and
//! the command that makes the same, and cached by content ([`super::cache`]).

use super::cache::{Cache, backend_now};
use super::markers::{self, Marker};
use super::outputs::{self, Body, Lab, Output};
use super::{recorded, wrap};
use anyhow::bail;
use gpubook::sync::lock;
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How a build's markers went.
#[derive(Debug, Default, Clone)]
pub struct FigureStats {
    pub cached: usize,
    pub made: usize,
    /// Time spent making the ones not cached.
    pub making_secs: f64,
    /// The marker that took longest to make, and its seconds.
    pub slowest: Option<(String, f64)>,
    /// Optional recordings (`recorded=NAME?`) not made yet.
    pub not_recorded: Vec<String>,
}

pub struct Figures {
    cache: Cache,
    stats: Arc<Mutex<FigureStats>>,
    /// The workspace root (book/recorded/ is read from it).
    root: PathBuf,
    /// `gpubook book --record DIR`: run the `recorded=` markers and write their files here.
    record_to: Option<PathBuf>,
}

impl Figures {
    pub const NAME: &'static str = "gpubook-figures";

    pub fn new(cache: Cache, stats: Arc<Mutex<FigureStats>>, root: &Path, record_to: Option<PathBuf>) -> Self {
        Figures { cache, stats, root: root.to_path_buf(), record_to }
    }

    fn one(&self, m: &Marker, lab: &Lab, backend: &str) -> anyhow::Result<String> {
        if m.name == "recordings" {
            return recorded::table(&self.root);
        }
        if let Some(name) = m.args.raw("recorded") {
            return self.recorded(m, name, lab);
        }
        let key = self.cache.key(&m.text, outputs::needs_device(m).then_some(backend));
        if let Some(html) = self.cache.get(&key) {
            lock(&self.stats).cached += 1;
            return Ok(html);
        }
        let started = Instant::now();
        let out = outputs::produce(m, lab)?;
        let origin = match &out.ran_on {
            Some(backend) => format!("Run at build time on {backend}"),
            None => "Computed at build time".to_string(),
        };
        let html = html(m, &out, &origin);
        let secs = started.elapsed().as_secs_f64();
        let mut stats = lock(&self.stats);
        stats.made += 1;
        stats.making_secs += secs;
        if stats.slowest.as_ref().is_none_or(|(_, s)| secs > *s) {
            stats.slowest = Some((m.text.clone(), secs));
        }
        self.cache.put(&key, &html);
        Ok(html)
    }

    /// A `recorded=NAME` marker: the recording, or with `--record`, a new one made here.
    /// `recorded=NAME?` is a recording that may not exist yet: the page then shows nothing there,
    /// and the build's report says so.
    fn recorded(&self, m: &Marker, name: &str, lab: &Lab) -> anyhow::Result<String> {
        let live = m.without("recorded");
        if !outputs::needs_device(&live) {
            bail!("`recorded=` is for outputs that run on a device; this one is computed the same everywhere");
        }
        let (name, optional) = match name.strip_suffix('?') {
            Some(n) => (n, true),
            None => (name, false),
        };
        let rec = match &self.record_to {
            Some(dir) => {
                let gpu = lab.gpu()?;
                if gpu.backend() != gpubook::gpu::BackendKind::Cuda {
                    bail!("`gpubook book --record` records on a GPU, and this machine runs the emulator");
                }
                let out = outputs::produce(&live, lab)?;
                recorded::save(dir, name, &live.text, &out, gpu)?
            }
            None if optional && !recorded::exists(&self.root, name) => {
                gpubook::sync::lock(&self.stats).not_recorded.push(name.to_string());
                return Ok(String::new());
            }
            None => recorded::load(&self.root, name, &live.text)?,
        };
        let out = Output {
            body: rec.body.clone(),
            caption: rec.caption.clone(),
            ran_on: Some(rec.machine.device.clone()),
            command: rec.command.clone(),
        };
        let mut origin = format!("Recorded on {}", rec.machine.describe());
        if let Some(note) = &rec.note {
            origin += &format!(" ({note})");
        }
        let command = rec.command.as_ref().map(|c| format!("GPUBOOK_BACKEND=cuda {c}"));
        Ok(html(&live, &Output { command, ..out }, &origin))
    }
}

impl Preprocessor for Figures {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let lab = Lab::default();
        let backend = backend_now();
        let mut errors = Vec::new();
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let page = format!("book/src/{}", ch.path.as_deref().unwrap_or(std::path::Path::new("?")).display());
            let found = match markers::find(&ch.content, &["figure", "run", "recordings"]) {
                Ok(m) => m,
                Err(e) => return errors.push(e.context(page)),
            };
            match markers::replace(&ch.content, &found, |m| self.one(m, &lab, &backend)) {
                Ok(content) => ch.content = content,
                Err(es) => errors.extend(es.into_iter().map(|e| e.context(page.clone()))),
            }
        });
        if let Some(all) = errors.into_iter().map(|e| format!("{e:#}")).reduce(|a, b| a + "\n" + &b) {
            bail!("{all}");
        }
        Ok(book)
    }
}

/// The output as it goes on the page, with its caption and where it came from (`origin`: run
/// here, computed, or recorded on a GPU), and the command that makes the same where one does.
/// An SVG is inlined (its text stays selectable, and the browser check can measure it) with no
/// blank line inside, which would end the HTML block for Markdown.
fn html(m: &Marker, out: &Output, origin: &str) -> String {
    let mut provenance = format!("{origin} from <code>{{{{#{}}}}}</code>", esc(&m.text));
    if let Some(c) = &out.command {
        provenance += &format!("; the same with <code>{}</code>", esc(c));
    }
    let provenance = format!("<span class=\"gpubook-provenance\">{provenance}</span>");
    let backend_attr = out.ran_on.as_deref().map(esc).unwrap_or_else(|| "computed".into());
    let caption = inline_code(&esc(&out.caption));
    if let Some(svg) = out.body.svg() {
        let svg: String = svg.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n");
        return format!(
            "\n<figure class=\"gpubook-figure\" data-backend=\"{backend_attr}\">\n{svg}\n<figcaption>{caption}. {provenance}</figcaption>\n</figure>\n"
        );
    }
    match &out.body {
        Body::Markdown(md) => format!(
            "\n<div class=\"gpubook-run\" data-backend=\"{backend_attr}\">\n\n{}\n\n<p class=\"gpubook-run-caption\">{caption}. {provenance}</p>\n</div>\n",
            markdown_with_breaks(md.trim_end())
        ),
        Body::Text(text) | Body::Svg(text) => format!(
            "\n<div class=\"gpubook-run\" data-backend=\"{backend_attr}\">\n<pre><code class=\"language-text\">{}</code></pre>\n<p class=\"gpubook-run-caption\">{caption}. {provenance}</p>\n</div>\n",
            wrap::preformatted_html(text, wrap::Lang::Text, wrap::COLUMNS)
        ),
        Body::Timeline(_) | Body::Bandwidth { .. } => unreachable!("figures have an SVG"),
    }
}

/// A program's Markdown output: its tables as they are, its other lines kept as lines (a hard
/// break after each), with a blank line around every table.
fn markdown_with_breaks(md: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    for line in md.lines() {
        let table = line.trim_start().starts_with('|');
        if table != in_table && !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        in_table = table;
        if line.trim().is_empty() {
            if !out.ends_with("\n\n") {
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push_str(if table { "\n" } else { "  \n" });
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `` `code` `` spans to `<code>` (captions sit in HTML, where Markdown is not rendered).
fn inline_code(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            out += &format!("<code>{part}</code>");
        } else {
            out += part;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(text: &str) -> Marker {
        markers::find(&format!("{{{{#{text}}}}}"), &["figure", "run"]).unwrap().remove(0)
    }

    #[test]
    fn figures_are_inline_svg_with_their_provenance() {
        let m = marker("figure launch n=100 block=32");
        let out = outputs::produce(&m, &Lab::default()).unwrap();
        let h = html(&m, &out, "Computed at build time");
        assert!(h.starts_with("\n<figure class=\"gpubook-figure\" data-backend=\"computed\">\n<svg"));
        assert!(!h.contains("\n\n<"), "no blank line inside the figure");
        assert!(h.contains("Computed at build time from <code>{{#figure launch n=100 block=32}}</code>"));
    }

    #[test]
    fn runs_are_preformatted_and_tables_stay_markdown() {
        let m = marker("run pipeline 1f1b pp=2 n=4");
        let report = html(&m, &outputs::produce(&m, &Lab::default()).unwrap(), "Computed at build time");
        assert!(report.contains("<pre><code class=\"language-text\">"));
        assert!(report.contains("--f 1 --b 2 --w 1"), "the caption's command gives every cost: {report}");
        let m = marker("run pipeline-compare pp=4 n=8");
        let table = outputs::produce(&m, &Lab::default()).unwrap();
        assert!(html(&m, &table, "Computed at build time").contains("\n\n| schedule |"));
    }

    #[test]
    fn bad_markers_say_what_they_take() {
        let e = outputs::produce(&marker("figure launch n=10 blok=4"), &Lab::default()).err().unwrap();
        assert!(e.to_string().contains("unknown option `blok`"), "{e}");
        let e = outputs::produce(&marker("figure spiral"), &Lab::default()).err().unwrap();
        assert!(e.to_string().contains("unknown figure `spiral`"), "{e}");
    }

    #[test]
    fn program_markdown_keeps_its_lines_and_tables() {
        let md = "one line\nanother\n| a | b |\n|---|---|\n| 1 | 2 |\nafter";
        assert_eq!(markdown_with_breaks(md), "one line  \nanother  \n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter  \n");
    }

    #[test]
    fn a_pipeline_figure_names_the_command_that_draws_it() {
        let m = marker("figure pipeline zb1p pp=4 n=8 f=2 b=4 w=2");
        let h = html(&m, &outputs::produce(&m, &Lab::default()).unwrap(), "Computed at build time");
        assert!(h.contains("gpubook pipeline --schedule zb1p --pp 4 --microbatches 8 --f 2 --b 4 --w 2 --svg FILE.svg"), "{h}");
    }
}
