//! `{{#figure ...}}` and `{{#run ...}}`: outputs made at build time (see [`super::outputs`] for the
//! kinds), each captioned with what produced it, and cached by content ([`super::cache`]).

use super::cache::{Cache, backend_now};
use super::markers::{self, Marker};
use super::outputs::{self, Body, Lab, Output};
use anyhow::bail;
use gpubook::sync::lock;
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
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
}

pub struct Figures {
    cache: Cache,
    stats: Arc<Mutex<FigureStats>>,
}

impl Figures {
    pub const NAME: &'static str = "gpubook-figures";

    pub fn new(cache: Cache, stats: Arc<Mutex<FigureStats>>) -> Self {
        Figures { cache, stats }
    }

    fn one(&self, m: &Marker, lab: &Lab, backend: &str) -> anyhow::Result<String> {
        let key = self.cache.key(&m.text, outputs::needs_device(m).then_some(backend));
        if let Some(html) = self.cache.get(&key) {
            lock(&self.stats).cached += 1;
            return Ok(html);
        }
        let started = Instant::now();
        let html = html(m, &outputs::produce(m, lab)?);
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
            let found = match markers::find(&ch.content, &["figure", "run"]) {
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

/// The output as it goes on the page. An SVG is inlined (its text stays selectable and it scales
/// with the page) with no blank line inside, which would end the HTML block for Markdown.
fn html(m: &Marker, out: &Output) -> String {
    let origin = match &out.ran_on {
        Some(backend) => format!("Run at build time on {backend}"),
        None => "Computed at build time".to_string(),
    };
    let provenance = format!("<span class=\"gpubook-provenance\">{origin} from <code>{{{{#{}}}}}</code></span>", esc(&m.text));
    let backend_attr = out.ran_on.as_deref().map(esc).unwrap_or_else(|| "computed".into());
    let caption = inline_code(&esc(&out.caption));
    match &out.body {
        Body::Svg(svg) => {
            let svg: String = svg.as_str().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n");
            format!(
                "\n<figure class=\"gpubook-figure\" data-backend=\"{backend_attr}\">\n{svg}\n<figcaption>{caption}. {provenance}</figcaption>\n</figure>\n"
            )
        }
        Body::Text(text) => format!(
            "\n<div class=\"gpubook-run\" data-backend=\"{backend_attr}\">\n<pre><code class=\"language-text\">{}</code></pre>\n<p class=\"gpubook-run-caption\">{caption}. {provenance}</p>\n</div>\n",
            // A blank line would end the HTML block for Markdown: give it an invisible no-break space.
            esc(text.trim_end()).split('\n').map(|l| if l.trim().is_empty() { "&#160;" } else { l }).collect::<Vec<_>>().join("\n")
        ),
        Body::Markdown(md) => format!(
            "\n<div class=\"gpubook-run\" data-backend=\"{backend_attr}\">\n\n{}\n\n<p class=\"gpubook-run-caption\">{caption}. {provenance}</p>\n</div>\n",
            md.trim_end()
        ),
    }
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
        let h = html(&m, &out);
        assert!(h.starts_with("\n<figure class=\"gpubook-figure\" data-backend=\"computed\">\n<svg"));
        assert!(!h.contains("\n\n<"), "no blank line inside the figure");
        assert!(h.contains("Computed at build time from <code>{{#figure launch n=100 block=32}}</code>"));
    }

    #[test]
    fn runs_are_preformatted_and_tables_stay_markdown() {
        let report =
            html(&marker("run pipeline 1f1b pp=2 n=4"), &outputs::produce(&marker("run pipeline 1f1b pp=2 n=4"), &Lab::default()).unwrap());
        assert!(report.contains("<pre><code class=\"language-text\">"));
        let table = outputs::produce(&marker("run pipeline-compare pp=4 n=8"), &Lab::default()).unwrap();
        assert!(html(&marker("run pipeline-compare pp=4 n=8"), &table).contains("\n\n| schedule |"));
    }

    #[test]
    fn bad_markers_say_what_they_take() {
        let e = outputs::produce(&marker("figure launch n=10 blok=4"), &Lab::default()).err().unwrap();
        assert!(e.to_string().contains("unknown option `blok`"), "{e}");
        let e = outputs::produce(&marker("figure spiral"), &Lab::default()).err().unwrap();
        assert!(e.to_string().contains("unknown figure `spiral`"), "{e}");
    }
}
