//! What a grader finds: `Failure` in a teacher's words, and `GradeReport`, the typed record of one
//! grader run, which a grader returns. Every front end renders the same value: the terminal (the
//! CLI, and the text a failing `cargo test` prints: [`GradeReport::text`]), the book's Check
//! button (as JSON) and a notebook's `check!` (as HTML). A test process hands it to the runner as
//! JSON where the runner asks for it; printed test output is for people and never parsed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why an exercise did not pass, in a teacher's words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// One line: what went wrong.
    pub what: String,
    /// The idea the mistake points to.
    pub concept: Option<String>,
    /// The input that showed it (e.g. "n = 257 (block + 1)").
    pub input: Option<String>,
    /// Evidence: first mismatches, the emulator's diagnostic, trace facts.
    pub details: Vec<String>,
}

impl Failure {
    pub fn new(what: impl Into<String>) -> Self {
        Failure { what: what.into(), ..Default::default() }
    }
    pub fn concept(mut self, c: impl Into<String>) -> Self {
        self.concept = Some(c.into());
        self
    }
    pub fn input(mut self, i: impl Into<String>) -> Self {
        self.input = Some(i.into());
        self
    }
    pub fn detail(mut self, d: impl Into<String>) -> Self {
        self.details.push(d.into());
        self
    }
    /// Sets the input unless one is already named.
    pub fn or_input(mut self, i: impl Into<String>) -> Self {
        if self.input.is_none() {
            self.input = Some(i.into());
        }
        self
    }
}

impl From<gpubook::gpu::GpuError> for Failure {
    fn from(e: gpubook::gpu::GpuError) -> Self {
        use gpubook::gpu::GpuError as E;
        let concept = match &e {
            E::Compile { .. } => "the kernel must compile: read the first error and the line it names",
            E::Arguments { .. } => "kernel arguments must match the kernel's parameters in number, order and type",
            E::LaunchConfig { .. } => "a launch must fit the GPU's limits: at most 1024 threads per block, no empty grid",
            E::Kernel(_) => "the kernel did something a GPU would not forgive (the emulator says what and where)",
            E::Hazard(_) => "work on different streams is unordered unless an event or a synchronisation orders it",
            E::Size(_) => "copies move whole slices of equal length; bytes and elements are different units",
            _ => "the host code returned an error",
        };
        Failure::new(format!("your code returned an error: {}", first_line(&e.to_string()))).concept(concept).detail(e.to_string())
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One grader run, as the runner reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeReport {
    /// The exercise, as exercises.toml names it.
    pub id: String,
    pub passed: bool,
    /// Why it did not pass; `None` when it passed.
    pub failure: Option<Failure>,
    /// The test and function the catalog gives this exercise (empty when it has no entry): a
    /// `graded!` test checks that it called the grader of its own entry.
    pub test: String,
    pub function: String,
    /// The seed of the inputs (`GPUBOOK_SEED` reproduces them).
    pub seed: u64,
    /// The device it ran on, e.g. "emulator (gpubook CPU emulator)".
    pub backend: String,
    /// The crate whose answer was graded (`exercises` for the learner's own), known at compile
    /// time where the test was written; `None` when a grader was called outside `graded!`.
    pub graded_crate: Option<String>,
    /// Checks this backend could not make (e.g. access counts on a GPU), each with why.
    pub skipped_checks: Vec<String>,
    /// How long the grader took, in milliseconds.
    pub took_ms: u64,
}

impl GradeReport {
    /// What `graded_crate` says of an answer written in a notebook (`gpubook_course::check!`).
    pub const NOTEBOOK: &str = "notebook";

    /// The environment variable that asks graders for their reports: a folder.
    pub const DIR_VAR: &str = "GPUBOOK_REPORT_DIR";

    /// Where the report of `id` goes in `dir`.
    pub fn path(dir: &Path, id: &str) -> PathBuf {
        dir.join(format!("{id}.json"))
    }

    /// Reads the report of `id` from `dir`; `Ok(None)` when there is none (the grader never
    /// finished: the process died first).
    pub fn read(dir: &Path, id: &str) -> anyhow::Result<Option<GradeReport>> {
        use anyhow::Context;
        let path = Self::path(dir, id);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes it into `dir` (whole or not at all: a reader never sees half a file).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let path = Self::path(dir, &self.id);
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(self).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &path)
    }

    /// Whether this run graded the learner's own answer (only those count as progress): the
    /// `exercises` crate's, or one written in a notebook.
    pub fn is_the_learners(&self) -> bool {
        matches!(self.graded_crate.as_deref(), Some("exercises" | Self::NOTEBOOK))
    }

    /// The report as plain text, as a failing test prints it; `None` when it passed.
    pub fn text(&self) -> Option<String> {
        self.failure.as_ref().map(|failure| Text { report: self, failure }.to_string())
    }

    /// The command that gives the next hint.
    pub fn hint_command(&self) -> String {
        format!("gpubook hint {}", self.id)
    }
}

/// The plain-text rendering (labels `concept:`, `input:`, ... in a column).
struct Text<'a> {
    report: &'a GradeReport,
    failure: &'a Failure,
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (r, fl) = (self.report, self.failure);
        writeln!(f, "\n✗ {} is not solved yet: {}", r.id, fl.what)?;
        if let Some(c) = &fl.concept {
            writeln!(f, "  concept: {c}")?;
        }
        if let Some(i) = &fl.input {
            writeln!(f, "  input:   {i}")?;
        }
        for d in &fl.details {
            for (k, line) in d.lines().enumerate() {
                writeln!(f, "  {} {line}", if k == 0 { "-" } else { " " })?;
            }
        }
        writeln!(f, "  backend: {}; seed {} (GPUBOOK_SEED={} reproduces these inputs)", r.backend, r.seed, r.seed)?;
        write!(f, "  next:    `{}` for a hint", r.hint_command())
    }
}
