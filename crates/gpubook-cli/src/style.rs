//! The runner's colours. Text carries anstyle's ANSI codes and is printed through anstream,
//! which strips them for pipes, files and `NO_COLOR`, so no caller has to decide.

use anstyle::{AnsiColor, Style};
use std::fmt::Display;

pub const OK: Style = AnsiColor::Green.on_default().bold();
pub const BAD: Style = AnsiColor::Red.on_default().bold();
pub const WARN: Style = AnsiColor::Yellow.on_default().bold();
pub const CODE: Style = AnsiColor::Cyan.on_default();
pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();

/// `text` in `style` (the reset code after it keeps the style from leaking).
pub fn paint(style: Style, text: impl Display) -> String {
    format!("{style}{text}{style:#}")
}

/// A command the learner can type, shown as code.
pub fn cmd(text: impl Display) -> String {
    paint(CODE, format_args!("`{text}`"))
}

/// Spans between backticks shown as code: grader reports and hints name commands and code that way.
pub fn code_spans(line: &str) -> String {
    let parts: Vec<&str> = line.split('`').collect();
    let mut out = String::with_capacity(line.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        // Odd parts sit between two backticks, except an unpaired last one: that stays plain.
        if i % 2 == 1 && i + 1 < parts.len() {
            out.push_str(&cmd(part));
        } else {
            if i % 2 == 1 {
                out.push('`');
            }
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn code_spans_keep_the_text() {
        assert_eq!(plain(&code_spans("run `gpubook hint x` now")), "run `gpubook hint x` now");
        assert_eq!(plain(&code_spans("a lone ` stays")), "a lone ` stays");
        assert_ne!(code_spans("`a`"), "`a`", "a closed span is styled");
    }
}
