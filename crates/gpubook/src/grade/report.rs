//! What a learner reads when an exercise does not pass.

use std::fmt;

/// Why an exercise did not pass, in a teacher's words.
#[derive(Debug, Clone, Default)]
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

impl From<crate::gpu::GpuError> for Failure {
    fn from(e: crate::gpu::GpuError) -> Self {
        use crate::gpu::GpuError as E;
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

/// The full report, as printed by a failing test.
pub(crate) struct Report<'a> {
    pub id: &'a str,
    pub failure: &'a Failure,
    pub seed: u64,
    pub backend: String,
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fl = self.failure;
        writeln!(f, "\n✗ {} is not solved yet: {}", self.id, fl.what)?;
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
        writeln!(f, "  backend: {}; seed {} (GPUBOOK_SEED={} reproduces these inputs)", self.backend, self.seed, self.seed)?;
        write!(f, "  next:    `gpubook hint {}` for a hint", self.id)
    }
}
