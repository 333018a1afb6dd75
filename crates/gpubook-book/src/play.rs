//! `{{#play FILE[:ANCHOR] kernel=NAME grid=G block=B args="f32[1000]:iota i32=1000"}}`: a
//! runnable listing. The static book shows the code, the output it gave when the book was built
//! and how to run it locally; the served book (`gpubook book --serve`, see [`super::serve`])
//! turns it into an editor with Run and Reset. The launch is the page's: a request to the server
//! names the listing's id and sends the edited source, nothing else.

use super::cache::Cache;
use super::markers::{self, Marker};
use super::wrap;
use anyhow::{Context, anyhow, bail};
use gpubook_course::catalog::Exercise;
use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One runnable listing: what the page shows and the launch it declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Unique in the book: the kernel's name, or the marker's `id=`.
    pub id: String,
    /// The file it comes from, relative to the workspace root.
    pub file: String,
    /// The code shown and edited (the anchor's lines when the marker names one).
    pub source: String,
    pub kernel: String,
    pub grid: String,
    pub block: String,
    /// `gpubook run`'s `--arg`s, in order.
    pub args: Vec<String>,
    /// Dynamic shared memory per block, in bytes.
    pub shared: u32,
    /// `gpubook run`'s `--then` launches, in order.
    pub then: Vec<String>,
    /// `gpubook run`'s `--ranks`: 1, or the ranks each launch runs on.
    pub ranks: usize,
}

impl Listing {
    fn from_marker(m: &Marker, root: &Path) -> anyhow::Result<Listing> {
        m.args.only(1, &["kernel", "grid", "block", "args", "id"])?;
        let spec = m.args.positional(0).ok_or_else(|| anyhow!("names no file (`{{{{#play kernels/demos/spmd.cu:scale ...}}}}`)"))?;
        let (file, anchor) = spec.split_once(':').map_or((spec, None), |(f, a)| (f, Some(a)));
        let text = std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))?;
        let source = match anchor {
            Some(a) => anchored(&text, a).with_context(|| format!("in {file}"))?,
            None => without_anchors(&text),
        };
        let kernel: String = m.args.need("kernel")?;
        let id = m.args.raw("id").unwrap_or(&kernel).to_string();
        if !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            bail!("id `{id}`: letters, digits, - and _ only");
        }
        let args: Vec<String> = m.args.raw("args").unwrap_or("").split_whitespace().map(str::to_string).collect();
        Ok(Listing {
            id,
            file: file.to_string(),
            source,
            kernel,
            grid: m.args.get("grid", "1".to_string())?,
            block: m.args.get("block", "32".to_string())?,
            args,
            shared: 0,
            then: Vec::new(),
            ranks: 1,
        })
    }

    /// An exercise's kernel with its catalog `run` launch, the source its stub in `exercises/`.
    pub fn of_exercise(e: &Exercise, root: &Path) -> anyhow::Result<Option<Listing>> {
        let Some(launch) = e.launch() else { return Ok(None) };
        let launch = launch?;
        let file = format!("exercises/{}", launch.file);
        let text = std::fs::read_to_string(root.join(&file)).with_context(|| format!("reading {file}"))?;
        Ok(Some(Listing {
            id: e.id.clone(),
            file,
            source: without_anchors(&text),
            kernel: launch.kernel,
            grid: launch.grid,
            block: launch.block,
            args: launch.args,
            shared: launch.shared,
            then: launch.then,
            ranks: launch.ranks,
        }))
    }

    /// `gpubook run`'s arguments for this launch of `file`.
    pub fn run_args(&self, file: &Path) -> Vec<String> {
        let mut a = vec![
            "run".into(),
            file.display().to_string(),
            "--kernel".into(),
            self.kernel.clone(),
            "--grid".into(),
            self.grid.clone(),
            "--block".into(),
            self.block.clone(),
        ];
        if self.shared > 0 {
            a.push("--shared".into());
            a.push(self.shared.to_string());
        }
        if self.ranks > 1 {
            a.push("--ranks".into());
            a.push(self.ranks.to_string());
        }
        for arg in &self.args {
            a.push("--arg".into());
            a.push(arg.clone());
        }
        for then in &self.then {
            a.push("--then".into());
            a.push(then.clone());
        }
        a
    }

    /// The command a reader types to run the listing's file as it is.
    pub fn command(&self) -> String {
        let quoted: Vec<String> =
            self.run_args(Path::new(&self.file)).into_iter().map(|a| if a.contains(['[', ' ']) { format!("'{a}'") } else { a }).collect();
        format!("gpubook {}", quoted.join(" "))
    }
}

fn without_anchors(text: &str) -> String {
    text.lines().filter(|l| !l.contains("ANCHOR")).collect::<Vec<_>>().join("\n") + "\n"
}

/// The lines between `ANCHOR: name` and `ANCHOR_END: name`, without other anchors' lines.
fn anchored(text: &str, anchor: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let is = |l: &str, tag: &str| l.trim_start().trim_start_matches("//").trim() == format!("{tag} {anchor}");
    let start = lines.iter().position(|l| is(l, "ANCHOR:")).ok_or_else(|| anyhow!("no `ANCHOR: {anchor}`"))?;
    let end = lines[start..].iter().position(|l| is(l, "ANCHOR_END:")).ok_or_else(|| anyhow!("no `ANCHOR_END: {anchor}`"))? + start;
    Ok(lines[start + 1..end].iter().filter(|l| !l.contains("ANCHOR")).map(|l| format!("{l}\n")).collect())
}

/// What one run of a listing printed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The launch finished without a diagnostic.
    pub ok: bool,
    pub output: String,
    /// The source lines the diagnostics point at (1-based, in the edited source), the first
    /// diagnostic's first: a race names two.
    pub lines: Vec<u32>,
    pub timed_out: bool,
    /// What the run touched (`gpubook run --map`'s JSON), when it wrote one.
    pub map: Option<serde_json::Value>,
}

/// Runs `source` as the listing's launch with `gpubook run` in a child process in a fresh
/// folder, stopped after `limit`. The diagnostics name the file, so they are rewritten to say
/// "line N" of what the reader sees.
pub fn run(exe: &Path, listing: &Listing, source: &str, limit: Duration) -> anyhow::Result<RunOutput> {
    let dir = tempfile::tempdir().context("making a folder for the run")?;
    let file = dir.path().join(format!("{}.cu", listing.id));
    std::fs::write(&file, source).context("writing the kernel")?;
    let map_file = dir.path().join("map.json");
    let mut cmd = Command::new(exe);
    cmd.args(listing.run_args(&file)).arg("--map").arg(&map_file).current_dir(dir.path()).env("NO_COLOR", "1");
    let (status, output, timed_out) = run_limited(cmd, limit)?;
    let shown = output.replace(&file.display().to_string(), "line");
    let map = std::fs::read(&map_file).ok().and_then(|b| serde_json::from_slice(&b).ok());
    Ok(RunOutput { ok: status == Some(0) && !timed_out, lines: lines_named(&shown), output: shown, timed_out, map })
}

/// Runs `cmd` with stdout and stderr together, killed after `limit`: its exit code (`None`
/// when killed or ended by a signal), what it printed, and whether the limit stopped it.
pub fn run_limited(mut cmd: Command, limit: Duration) -> anyhow::Result<(Option<i32>, String, bool)> {
    let out = tempfile::tempfile().context("a file for the output")?;
    cmd.stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out.try_clone()?);
    let mut child = cmd.spawn().context("starting gpubook")?;
    let started = Instant::now();
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait()? {
            break (status.code(), false);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = out;
    use std::io::{Read, Seek};
    out.rewind()?;
    let mut bytes = Vec::new();
    out.take(1 << 20).read_to_end(&mut bytes)?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if timed_out {
        text.push_str(&format!("\nstopped after {} s: the time limit of a run from the page\n", limit.as_secs()));
    }
    Ok((status, text, timed_out))
}

/// Every `at line:N` in a run's output, in order, each once.
fn lines_named(output: &str) -> Vec<u32> {
    let mut lines = Vec::new();
    for part in output.split("at line:").skip(1) {
        if let Ok(n) = part.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("").parse()
            && !lines.contains(&n)
        {
            lines.push(n);
        }
    }
    lines
}

/// The preprocessor: listings replaced by their HTML and collected for the server.
pub struct Play {
    root: PathBuf,
    cache: Cache,
    /// `gpubook` itself, to record each listing's output; `None` shows none.
    exe: Option<PathBuf>,
    pub listings: Arc<Mutex<Vec<Listing>>>,
}

impl Play {
    pub const NAME: &'static str = "gpubook-play";

    pub fn new(root: &Path, cache: Cache, exe: Option<PathBuf>, listings: Arc<Mutex<Vec<Listing>>>) -> Play {
        Play { root: root.to_path_buf(), cache, exe, listings }
    }

    /// The listing's output when the book was built, cached by its text and launch.
    fn recorded(&self, l: &Listing) -> Option<String> {
        let exe = self.exe.as_ref()?;
        let key = self.cache.key(&format!("play {l:?}"), Some("play"));
        if let Some(hit) = self.cache.get(&key) {
            return Some(hit);
        }
        let out = run(exe, l, &l.source, Duration::from_secs(60)).ok()?;
        self.cache.put(&key, &out.output);
        Some(out.output)
    }
}

impl Preprocessor for Play {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let mut errors = Vec::new();
        let mut found: Vec<Listing> = Vec::new();
        book.for_each_mut(|item| {
            let BookItem::Chapter(ch) = item else { return };
            let Some(path) = ch.path.clone() else { return };
            let ms = match markers::find(&ch.content, &["play"]) {
                Ok(m) => m,
                Err(e) => return errors.push(e.context(path.display().to_string())),
            };
            let rendered = markers::replace(&ch.content, &ms, |m| {
                let l = Listing::from_marker(m, &self.root)?;
                if found.iter().any(|o| o.id == l.id) {
                    bail!("a second listing with id `{}`: give one an `id=`", l.id);
                }
                let html = render(&l, self.recorded(&l).as_deref());
                found.push(l);
                Ok(html)
            });
            match rendered {
                Ok(content) => ch.content = content,
                Err(es) => errors.extend(es.into_iter().map(|e| e.context(format!("book/src/{}", path.display())))),
            }
        });
        if let Some(all) = errors.into_iter().reduce(|all, e| anyhow!("{all:#}\n{e:#}")) {
            bail!("{all:#}");
        }
        *gpubook::sync::lock(&self.listings) = found;
        Ok(book)
    }
}

/// The listing as the static book shows it; the served book's script finds it by `data-play`
/// and takes the source to edit from `data-source` (the shown code is reflowed to the column).
pub fn render(l: &Listing, recorded: Option<&str>) -> String {
    let mut out = format!(
        "\n<div class=\"gpubook-play\" data-play=\"{id}\" data-source=\"{src}\">\n\
         <pre><code class=\"language-c\">{code}</code></pre>\n",
        id = esc(&l.id),
        src = esc(&l.source).replace('\n', "&#10;"),
        code = wrap::preformatted_html(l.source.trim_end(), wrap::Lang::C, wrap::COLUMNS),
    );
    if let Some(text) = recorded {
        out += &format!(
            "<details class=\"gpubook-play-recorded\"><summary>Its output when the book was built</summary>\n\
             <pre><code class=\"language-text\">{}</code></pre>\n</details>\n",
            wrap::preformatted_html(text.trim_end(), wrap::Lang::Text, wrap::COLUMNS)
        );
    }
    out += &format!(
        "<p class=\"gpubook-play-local\">Run it yourself: <code>gpubook book --serve</code> makes this listing an \
         editor with a Run button; or <code>{}</code></p>\n</div>\n",
        esc(&l.command())
    );
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing() -> Listing {
        Listing {
            id: "scale".into(),
            file: "kernels/demos/spmd.cu".into(),
            source: "__global__ void scale(float* y, int n) {\n    y[0] = n < 1;\n}\n".into(),
            kernel: "scale".into(),
            grid: "4".into(),
            block: "256".into(),
            args: vec!["f32[1000]:zeros".into(), "i32=1000".into()],
            shared: 0,
            then: vec![],
            ranks: 1,
        }
    }

    #[test]
    fn an_anchor_is_its_lines_without_other_anchors() {
        let text = "a\n// ANCHOR: k\nb\n// ANCHOR: inner\nc\n// ANCHOR_END: inner\n// ANCHOR_END: k\nd\n";
        assert_eq!(anchored(text, "k").unwrap(), "b\nc\n");
        assert!(anchored(text, "x").is_err());
    }

    #[test]
    fn the_static_listing_keeps_its_source_and_says_how_to_run_it() {
        let html = render(&listing(), Some("launched: ok"));
        assert!(html.contains("data-play=\"scale\""));
        assert!(html.contains("data-source=\"__global__ void scale(float* y, int n) {&#10;    y[0] = n &lt; 1;&#10;}&#10;\""), "{html}");
        assert!(html.contains("launched: ok"));
        assert!(html.contains("gpubook run kernels/demos/spmd.cu --kernel scale --grid 4 --block 256 --arg 'f32[1000]:zeros'"));
        assert!(!html.trim().lines().any(|l| l.trim().is_empty()), "a blank line would end mdbook's HTML block");
    }

    #[cfg(unix)]
    #[test]
    fn a_run_past_its_time_limit_is_stopped() {
        let started = Instant::now();
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let (status, text, timed_out) = run_limited(sleep, Duration::from_millis(200)).unwrap();
        assert!(timed_out && status.is_none(), "{status:?}");
        assert!(text.contains("stopped after"));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn the_diagnostics_line_is_found() {
        assert_eq!(lines_named("out of bounds: thread (1,0,0), at line:3\n  more"), [3]);
        assert_eq!(lines_named("data race: at line:5\n  note: the other access, at line:6\n at line:5"), [5, 6]);
        assert!(lines_named("launched: ok").is_empty());
    }
}
