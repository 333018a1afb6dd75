//! The served book's two actions: Run (a listing's edited kernel, with the launch its page
//! declares, run by `gpubook run` in a child process with a time limit, so a kernel that hangs a
//! GPU cannot hang the server) and Check (an exercise, graded by the course's runner in this
//! process exactly as `gpubook check` grades it, within a time limit, recording progress; the
//! page receives the typed outcome and renders it). A request is JSON naming a listing or
//! exercise id (and, for Run, the source): never a path, never a launch, nothing else.

use super::guard::{Guard, TOKEN_HEADER};
use super::play::{self, Listing};
use gpubook::sync::lock;
use gpubook_course::catalog::Catalog;
use gpubook_course::runner::{self, Outcome};
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const RUN_URL: &str = "/__gpubook/run";
pub const CHECK_URL: &str = "/__gpubook/check";

/// How much one request may ask for.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Bytes of a request's body (a kernel's source and its id).
    pub body: usize,
    pub run: Duration,
    /// A check may build the exercises' test binary first.
    pub check: Duration,
    /// Runs at once (checks: one at a time, as they share cargo's build folder).
    pub runs: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { body: 64 * 1024, run: Duration::from_secs(30), check: Duration::from_secs(600), runs: 2 }
    }
}

pub struct Playground {
    pub guard: Guard,
    /// The workspace root: exercises.toml and exercises/, which Check grades.
    pub root: PathBuf,
    /// `gpubook` itself, for Run; `None` answers every Run 503.
    pub exe: Option<PathBuf>,
    /// The book's runnable listings, replaced at every rebuild.
    pub listings: Arc<Mutex<Vec<Listing>>>,
    pub limits: Limits,
    runs: AtomicUsize,
    checking: AtomicBool,
}

/// An answer: status and JSON body.
pub type Reply = (u16, Value);

fn refuse(status: u16, why: impl Into<String>) -> Reply {
    (status, json!({ "error": why.into() }))
}

impl Playground {
    pub fn new(guard: Guard, root: PathBuf, exe: Option<PathBuf>, listings: Arc<Mutex<Vec<Listing>>>, limits: Limits) -> Playground {
        Playground { guard, root, exe, listings, limits, runs: AtomicUsize::new(0), checking: AtomicBool::new(false) }
    }

    /// Answers a request to RUN_URL or CHECK_URL (its Host has been checked).
    pub fn answer(&self, request: &mut tiny_http::Request) -> Reply {
        if *request.method() != tiny_http::Method::Post {
            return refuse(405, "POST only");
        }
        let header = |name: &'static str| request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str().to_string());
        if let Some(why) = self.guard.run(header("Origin").as_deref(), header(TOKEN_HEADER).as_deref()) {
            return refuse(403, why);
        }
        if request.body_length().is_some_and(|n| n > self.limits.body) {
            return refuse(413, format!("a request of more than {} bytes", self.limits.body));
        }
        let mut body = Vec::new();
        if request.as_reader().take(self.limits.body as u64 + 1).read_to_end(&mut body).is_err() {
            return refuse(400, "the request's body could not be read");
        }
        if body.len() > self.limits.body {
            return refuse(413, format!("a request of more than {} bytes", self.limits.body));
        }
        let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) else {
            return refuse(400, "the body is not a JSON object");
        };
        let run = request.url() == RUN_URL;
        let allowed: &[&str] = if run { &["id", "source"] } else { &["id"] };
        if let Some(other) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
            return refuse(403, format!("`{other}`: a request names a listing or exercise id (and a run its source), nothing else"));
        }
        let Some(id) = fields.get("id").and_then(Value::as_str) else {
            return refuse(400, "no `id`");
        };
        if run {
            let Some(source) = fields.get("source").and_then(Value::as_str) else {
                return refuse(400, "no `source`");
            };
            self.run(id, source)
        } else {
            self.check(id)
        }
    }

    fn run(&self, id: &str, source: &str) -> Reply {
        let Some(listing) = lock(&self.listings).iter().find(|l| l.id == id).cloned() else {
            return refuse(403, format!("`{id}` is no runnable listing of this book"));
        };
        let Some(exe) = &self.exe else {
            return refuse(503, "this server cannot run kernels (no gpubook binary)");
        };
        if self.runs.fetch_add(1, Ordering::SeqCst) >= self.limits.runs {
            self.runs.fetch_sub(1, Ordering::SeqCst);
            return refuse(429, format!("{} runs are going already: try again when one has finished", self.limits.runs));
        }
        let result = play::run(exe, &listing, source, self.limits.run);
        self.runs.fetch_sub(1, Ordering::SeqCst);
        match result {
            Ok(r) => (
                200,
                json!({ "ok": r.ok, "output": r.output, "line": r.lines.first(), "lines": r.lines, "timed_out": r.timed_out, "map": r.map }),
            ),
            Err(e) => refuse(500, format!("{e:#}")),
        }
    }

    /// Grades the learner's files for exercise `id` through the course's runner, in this
    /// process (it builds and runs the exercises' test binary as `gpubook check` does, and
    /// records progress), and answers with the typed outcome for the page to render.
    fn check(&self, id: &str) -> Reply {
        // No catalog here means no exercise of this book either.
        let exercise = Catalog::load(&self.root).ok().and_then(|c| c.get(id).cloned());
        let Some(exercise) = exercise else {
            return refuse(403, format!("`{id}` is no exercise of this book"));
        };
        if self.checking.swap(true, Ordering::SeqCst) {
            return refuse(429, "a check is going already: try again when it has finished");
        }
        let result = runner::grade_within(&self.root, &exercise, Some(self.limits.check), &mut |_| {});
        self.checking.store(false, Ordering::SeqCst);
        match result {
            Ok(outcome) => (200, json!({ "passed": outcome.passed(), "outcome": plain(outcome) })),
            Err(e) => refuse(500, format!("{e:#}")),
        }
    }
}

/// The outcome with cargo's colour codes taken out of its diagnostics: a page shows text.
fn plain(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::DoesNotCompile(d) => Outcome::DoesNotCompile(anstream::adapter::strip_str(&d).to_string()),
        other => other,
    }
}
