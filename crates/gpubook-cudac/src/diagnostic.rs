//! What a kernel bug reads like, whichever backend found it: a `Diagnostic` names the CUDA
//! thread, the buffer and the line, worded for a learner. The emulator fills one in from its
//! worker's report; graders and the book read them without knowing which backend ran.

use std::fmt;
use std::path::PathBuf;

/// The kind of kernel bug a diagnostic reports. The worker's replies spell it in snake case
/// (`out_of_bounds`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagClass {
    OutOfBounds,
    /// An access at an address that is not a multiple of its size (a float4 not 16-byte aligned).
    Misaligned,
    BarrierDivergence,
    /// A warp shuffle that reads a lane outside its mask, or one that does not exist.
    InvalidShuffle,
    Race,
    UninitializedRead,
    Hang,
    /// The watchdog stopped a launch that was still making progress: slow, not stuck.
    TooSlow,
    Crash,
    StackOverflow,
    LaunchConfig,
    Trap,
}

impl DiagClass {
    /// Words a learner reads at the start of the message.
    pub fn describe(self) -> &'static str {
        match self {
            DiagClass::OutOfBounds => "out of bounds",
            DiagClass::Misaligned => "misaligned",
            DiagClass::BarrierDivergence => "barrier divergence",
            DiagClass::InvalidShuffle => "invalid shuffle",
            DiagClass::Race => "data race",
            DiagClass::UninitializedRead => "read of uninitialized memory",
            DiagClass::Hang => "hang",
            DiagClass::TooSlow => "too slow",
            DiagClass::Crash => "crash",
            DiagClass::StackOverflow => "stack overflow",
            DiagClass::LaunchConfig => "invalid launch",
            DiagClass::Trap => "trap",
        }
    }
}

impl fmt::Display for DiagClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A bug found while running a kernel, with where it happened.
///
/// Displays like a teacher: `out of bounds: thread (5,0,0) of block (3,0,0) wrote c[1024], one
/// past the end of `c` (1024 f32), at kernels/ch03/vector_add.cu:7`, then one line per note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub class: DiagClass,
    /// What happened, without who or where (those are the fields below).
    pub message: String,
    pub file: Option<PathBuf>,
    pub line: Option<u32>,
    pub block: Option<[u32; 3]>,
    pub thread: Option<[u32; 3]>,
    /// Extra sentences: the other party of a race, what to try next, the worker's last words.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with only a class and a message.
    pub fn new(class: DiagClass, message: impl Into<String>) -> Diagnostic {
        Diagnostic { class, message: message.into(), file: None, line: None, block: None, thread: None, notes: Vec::new() }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// `kernels/ch03/vector_add.cu:7`, when known.
    pub fn location(&self) -> Option<String> {
        let file = self.file.as_ref()?.display();
        Some(match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        })
    }
}

fn xyz(v: [u32; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

impl fmt::Display for Diagnostic {
    /// A short message reads as one sentence: `class: who message, at file:line`. A message of
    /// whole sentences (the worker's explanations) goes on its own line under
    /// `class: who, at file:line`. Notes follow, one per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = strip_class_prefix(self.message.trim(), self.class);
        write!(f, "{}: ", self.class)?;
        // Who, unless the message starts by saying it.
        let who = match (self.thread, self.block) {
            (Some(t), Some(b)) => Some(format!("thread {} of block {}", xyz(t), xyz(b))),
            (None, Some(b)) => Some(format!("block {}", xyz(b))),
            (Some(t), None) => Some(format!("thread {}", xyz(t))),
            (None, None) => None,
        };
        let says_who = message.starts_with("thread (") || message.starts_with("block (");
        let who = who.filter(|w| !says_who && !message.contains(w.as_str()));
        // Where, unless the message already says it.
        let location = self.location().filter(|l| !message.contains(l.as_str()));
        let sentences = message.ends_with('.') || message.contains(". ");
        if sentences {
            let mut head: Vec<String> = who.into_iter().collect();
            head.extend(location.map(|l| format!("at {l}")));
            if head.is_empty() {
                f.write_str(message)?;
            } else {
                write!(f, "{}\n  {message}", head.join(", "))?;
            }
        } else {
            if let Some(who) = who {
                write!(f, "{who} ")?;
            }
            f.write_str(message)?;
            if let Some(loc) = location {
                write!(f, ", at {loc}")?;
            }
        }
        for note in &self.notes {
            write!(f, "\n  note: {}", note.trim_end())?;
        }
        Ok(())
    }
}

/// `hang: the launch ...` under the class `hang` → `the launch ...`: the class is said once.
fn strip_class_prefix(message: &str, class: DiagClass) -> &str {
    let words = class.describe();
    let n = words.len();
    let head = message.get(..n).map(|h| h.replace('-', " ").to_ascii_lowercase());
    match (head, message.get(n..)) {
        (Some(h), Some(rest)) if h == words && rest.starts_with(':') => rest[1..].trim_start(),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_reads_like_a_sentence() {
        let d = Diagnostic {
            class: DiagClass::OutOfBounds,
            message: "wrote c[1024], one past the end of `c` (1024 f32)".into(),
            file: Some("kernels/ch03/vector_add.cu".into()),
            line: Some(7),
            block: Some([3, 0, 0]),
            thread: Some([5, 0, 0]),
            notes: vec!["guard the store with `if (i < n)`".into()],
        };
        assert_eq!(
            d.to_string(),
            "out of bounds: thread (5,0,0) of block (3,0,0) wrote c[1024], one past the end of `c` \
             (1024 f32), at kernels/ch03/vector_add.cu:7\n  note: guard the store with `if (i < n)`"
        );
        let bare = Diagnostic::new(DiagClass::Hang, "the kernel did not finish within 2 s");
        assert_eq!(bare.to_string(), "hang: the kernel did not finish within 2 s");
    }

    #[test]
    fn sentences_go_on_their_own_line_and_the_class_is_said_once() {
        let mut d = Diagnostic::new(DiagClass::Hang, "hang: the launch ran for more than 2000 ms. A loop that never ends?");
        d.file = Some("k.cu".into());
        d.line = Some(4);
        d.block = Some([0, 0, 0]);
        d.thread = Some([1, 0, 0]);
        assert_eq!(
            d.to_string(),
            "hang: thread (1,0,0) of block (0,0,0), at k.cu:4\n  the launch ran for more than 2000 ms. A loop that never ends?"
        );
        let d = Diagnostic::new(DiagClass::OutOfBounds, "out-of-bounds write past the end: c[4].");
        assert_eq!(d.to_string(), "out of bounds: out-of-bounds write past the end: c[4].");
    }

    #[test]
    fn wire_classes_parse() {
        for (w, class) in [
            ("out_of_bounds", DiagClass::OutOfBounds),
            ("misaligned", DiagClass::Misaligned),
            ("barrier_divergence", DiagClass::BarrierDivergence),
            ("invalid_shuffle", DiagClass::InvalidShuffle),
            ("race", DiagClass::Race),
            ("uninitialized_read", DiagClass::UninitializedRead),
            ("hang", DiagClass::Hang),
            ("too_slow", DiagClass::TooSlow),
            ("crash", DiagClass::Crash),
            ("stack_overflow", DiagClass::StackOverflow),
            ("launch_config", DiagClass::LaunchConfig),
            ("trap", DiagClass::Trap),
        ] {
            assert_eq!(serde_json::from_str::<DiagClass>(&format!("\"{w}\"")).unwrap(), class, "{w}");
        }
        assert!(serde_json::from_str::<DiagClass>("\"bad_module\"").is_err());
    }
}
