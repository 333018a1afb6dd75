//! Reading what a test binary printed. libtest wraps a failing test's captured output in its own
//! framing (`running 1 test`, `---- name stdout ----`, `failures:`, `test result:`) and the
//! grader's report sits inside a panic message; the learner should see the report alone.

/// What one run of one test came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The grader's report, and whatever the learner's code printed before it.
    Failed {
        report: String,
        printed: String,
    },
    /// The binary has no test of that name (exercises/tests/ was changed or is out of date).
    NotFound,
    /// The process ended before the test finished; what it printed outside the capture.
    Stopped {
        printed: String,
    },
}

/// Reads libtest's plain output for the test named `function`.
pub fn parse(function: &str, stdout: &str) -> Verdict {
    let mut printed = Vec::new();
    let mut section = Vec::new();
    let mut in_section = false;
    let mut summary = None;
    let header = format!("---- {function} stdout ----");
    for line in stdout.lines() {
        if line == header {
            in_section = true;
        } else if line.starts_with("---- ") && line.ends_with(" stdout ----") || line == "failures:" {
            in_section = false;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            in_section = false;
            summary = Some(rest.to_string());
        } else if in_section {
            section.push(line);
        } else if !is_framing(line, function) {
            // Output from outside the test's capture: a kernel's printf from the emulator's
            // worker process, say.
            printed.push(line);
        }
    }
    if stdout.lines().any(|l| l == "running 0 tests") {
        return Verdict::NotFound;
    }
    let Some(summary) = summary else {
        // No summary: the process ended inside the test (process::exit, abort, a signal), and
        // libtest's capture died with it.
        return Verdict::Stopped { printed: trim_blank(&printed).join("\n") };
    };
    if summary.starts_with("ok.") && !summary.starts_with("ok. 0 passed") {
        return Verdict::Passed;
    }
    let (before, report) = split_report(&section);
    printed.extend(before);
    Verdict::Failed { report, printed: trim_blank(&printed).join("\n") }
}

/// libtest's own lines outside the failure sections.
fn is_framing(line: &str, function: &str) -> bool {
    line.is_empty()
        || line.starts_with("running ")
        || line == format!("    {function}")
        || line.starts_with(&format!("test {function} ... "))
}

/// Splits a failure section into what the learner's code printed and the grader's report. The
/// grader prints its report (first line `✗ …`) and unwinds quietly; a plain panic (no device, a
/// grader's own bug) shows as libtest's `thread '…' panicked at file:line:` and its message.
fn split_report<'a>(section: &[&'a str]) -> (Vec<&'a str>, String) {
    let panic_at = section.iter().position(|l| is_panic_line(l));
    let mut lines = Vec::with_capacity(section.len());
    let mut in_backtrace = false;
    for (i, line) in section.iter().enumerate() {
        in_backtrace = *line == "stack backtrace:" || in_backtrace && line.starts_with(' ');
        if Some(i) != panic_at && !in_backtrace && !line.starts_with("note: run with `RUST_BACKTRACE") {
            lines.push((i, *line));
        }
    }
    // The report starts at its `✗` line; without one, at the panic's message.
    let start = lines
        .iter()
        .rposition(|(_, l)| l.starts_with("✗ "))
        .or_else(|| panic_at.map(|p| lines.iter().position(|(i, _)| *i > p).unwrap_or(lines.len())))
        .unwrap_or(0);
    let printed = lines[..start].iter().map(|(_, l)| *l).collect();
    let report: Vec<&str> = lines[start..].iter().map(|(_, l)| *l).collect();
    (printed, trim_blank(&report).join("\n"))
}

/// libtest's line above a panic's message; since Rust 1.92 it names the thread's id too:
/// `thread 'f' (1234) panicked at src/x.rs:1:2:`.
fn is_panic_line(line: &str) -> bool {
    line.starts_with("thread '") && line.contains(" panicked at ")
}

fn trim_blank<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let start = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(start, |i| i + 1);
    lines[start..end].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAILED: &str = "
running 1 test
test vector_add ... FAILED

failures:

---- vector_add stdout ----
n = 1
thread 'vector_add' (4242) panicked at src/grade/run.rs:96:9:

✗ ch03-vector-add is not solved yet: not yet implemented (exercises/src/ch03.rs:12)
  concept: fill in the TODOs
  next:    `gpubook hint ch03-vector-add` for a hint
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    vector_add

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.21s

";

    #[test]
    fn a_failure_gives_the_report_alone() {
        let Verdict::Failed { report, printed } = parse("vector_add", FAILED) else { panic!("not a failure") };
        assert_eq!(
            report,
            "✗ ch03-vector-add is not solved yet: not yet implemented (exercises/src/ch03.rs:12)\n  \
             concept: fill in the TODOs\n  next:    `gpubook hint ch03-vector-add` for a hint"
        );
        assert_eq!(printed, "n = 1");
    }

    #[test]
    fn a_quiet_report_is_split_from_what_the_kernel_printed() {
        let out = "\nrunning 1 test\ntest vector_add ... FAILED\n\nfailures:\n\n---- vector_add stdout ----\n\
                   hi from 0\nhi from 1\n\n✗ ch03-vector-add is not solved yet: out of bounds\n  concept: guard it\n\n\n\
                   failures:\n    vector_add\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored\n";
        let want = Verdict::Failed {
            report: "✗ ch03-vector-add is not solved yet: out of bounds\n  concept: guard it".into(),
            printed: "hi from 0\nhi from 1".into(),
        };
        assert_eq!(parse("vector_add", out), want);
    }

    #[test]
    fn older_panic_lines_and_backtraces_are_recognised() {
        let out = "running 1 test\ntest f ... FAILED\n\nfailures:\n\n---- f stdout ----\n\
                   thread 'f' panicked at tests/t.rs:3:5:\nboom\nstack backtrace:\n   0: std::panicking\n\n\
                   failures:\n    f\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored\n";
        assert_eq!(parse("f", out), Verdict::Failed { report: "boom".into(), printed: String::new() });
    }

    #[test]
    fn stray_output_is_kept_as_printed() {
        let out = "\nrunning 1 test\nfrom a kernel: i = 3\ntest f ... FAILED\n\nfailures:\n\n---- f stdout ----\n\
                   thread 'f' panicked at a.rs:1:1:\nno\n\nfailures:\n    f\n\ntest result: FAILED. 0 passed; 1 failed\n";
        assert_eq!(parse("f", out), Verdict::Failed { report: "no".into(), printed: "from a kernel: i = 3".into() });
    }

    #[test]
    fn a_pass_and_a_missing_test() {
        let ok = "\nrunning 1 test\ntest vector_add ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.30s\n\n";
        assert_eq!(parse("vector_add", ok), Verdict::Passed);
        let none = "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out; finished in 0.00s\n\n";
        assert_eq!(parse("vector_add", none), Verdict::NotFound);
        let died = "\nrunning 1 test\nfrom a kernel\n";
        assert_eq!(parse("vector_add", died), Verdict::Stopped { printed: "from a kernel".into() });
    }
}
