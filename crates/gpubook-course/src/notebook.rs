//! Exercises solved in a notebook. Write the exercise's function in a cell (its kernel in another,
//! as a string, or edit the file under exercises/), then
//!
//! ```text
//! gpubook_course::check!(ch03::vector_add(vector_add))
//! ```
//!
//! grades it with the same grader as `gpubook check`, shows the report (as HTML in Jupyter), and
//! records the outcome in the progress record like any other check: a notebook cell is one more
//! runner. In a notebook, `kernel!` cannot find the exercises' folder (the cell's crate lives
//! elsewhere): load the kernel with [`exercise_kernel`] or `Source::text`.

use crate::catalog::Catalog;
use crate::grade::GradeReport;
use crate::progress::{self, Progress};
use gpubook::gpu::Source;
use std::fmt;

/// `check!(chNN::grader(answer, ...))`: grade answers written in a notebook and record the result.
#[macro_export]
macro_rules! check {
    ($chapter:ident :: $grader:ident ( $($answer:expr),+ $(,)? )) => {
        $crate::notebook::check_with(stringify!($chapter), stringify!($grader), || $crate::grade::$chapter::$grader($($answer),+))
    };
}

/// A kernel file of the learner's exercises/ folder, e.g. `exercise_kernel("ch03/vector_add.cu")`.
pub fn exercise_kernel(rel: &str) -> Source {
    let kernels = gpubook::paths::root().join("exercises").join("kernels");
    Source::file(kernels.join(rel)).include_dir(kernels)
}

/// The outcome of a notebook check; Jupyter shows it as HTML.
#[derive(Debug, Clone)]
pub struct Checked {
    pub report: GradeReport,
    /// Why the outcome could not be recorded, if it could not.
    pub not_recorded: Option<String>,
}

/// `check!`'s runtime half: runs `grade` (a grader called on the notebook's answers), records the
/// report under the exercise the catalog gives for (`chapter`, `grader`), and returns it.
pub fn check_with(chapter: &'static str, grader: &'static str, grade: impl FnOnce() -> GradeReport) -> Checked {
    check_in(&gpubook::paths::root(), chapter, grader, grade)
}

/// [`check_with`], recording into the course at `root`.
pub fn check_in(root: &std::path::Path, chapter: &'static str, grader: &'static str, grade: impl FnOnce() -> GradeReport) -> Checked {
    let mut report = grade();
    report.graded_crate = Some(GradeReport::NOTEBOOK.to_string());
    if report.test != chapter || report.function != grader {
        panic!("`{chapter}::{grader}` graded `{}`, whose catalog entry is `{}::{}`", report.id, report.test, report.function);
    }
    let not_recorded = record(root, &report);
    Checked { report, not_recorded }
}

/// Records `report` in the course at `root`; why not, when it could not be.
fn record(root: &std::path::Path, report: &GradeReport) -> Option<String> {
    match Catalog::load(root) {
        Ok(catalog) => match catalog.get(&report.id) {
            Some(ex) => match Progress::record_from_notebook(root, report, &progress::fingerprint(root, ex)) {
                Ok((_, true)) => Some("your files in exercises/ passed already; a failing notebook does not clear that".into()),
                Ok((_, false)) => None,
                Err(e) => Some(e.to_string()),
            },
            None => Some(format!("exercises.toml has no `{}`", report.id)),
        },
        Err(e) => Some(format!("{e:#}")),
    }
}

impl Checked {
    pub fn passed(&self) -> bool {
        self.report.passed
    }

    /// The report as a small HTML page fragment: green for a pass, the grader's words for a failure.
    pub fn html(&self) -> String {
        let r = &self.report;
        let (colour, title) = if r.passed {
            ("#2e7d32", format!("✓ {} passed", esc(&r.id)))
        } else {
            ("#c62828", format!("✗ {} is not solved yet", esc(&r.id)))
        };
        let mut out = format!(
            "<div style=\"border-left:4px solid {colour};padding:6px 10px;font-family:sans-serif\">\
             <div style=\"color:{colour};font-weight:bold\">{title}</div>"
        );
        if let Some(f) = &r.failure {
            // The report's fields, marked so a reader (and CI) can tell the report was shown.
            out.push_str("<div class=\"gpubook-report\">");
            out.push_str(&format!("<div style=\"margin:6px 0\">{}</div>", esc(&f.what)));
            let row = |label: &str, text: &str| format!("<div style=\"margin:2px 0\"><b>{label}</b> {}</div>", esc(text));
            if let Some(c) = &f.concept {
                out.push_str(&row("concept:", c));
            }
            if let Some(i) = &f.input {
                out.push_str(&row("input:", i));
            }
            if !f.details.is_empty() {
                out.push_str("<ul style=\"margin:4px 0;padding-left:18px\">");
                for d in &f.details {
                    out.push_str(&format!("<li><pre style=\"white-space:pre-wrap;font-size:13px;margin:0\">{}</pre></li>", esc(d)));
                }
                out.push_str("</ul>");
            }
            out.push_str(&row("seed:", &format!("{} (GPUBOOK_SEED={} reproduces these inputs)", r.seed, r.seed)));
            out.push_str(&row("next:", &format!("`{}` for a hint", r.hint_command())));
            out.push_str("</div>");
        }
        for skipped in &r.skipped_checks {
            out.push_str(&format!("<div style=\"color:#666\">not checked on this device: {}</div>", esc(skipped)));
        }
        let recorded = match &self.not_recorded {
            None => "recorded in your progress (gpubook list shows it)".to_string(),
            Some(why) => format!("not recorded: {}", esc(why)),
        };
        out.push_str(&format!("<div style=\"color:#666;font-size:12px\">{} · {recorded}</div></div>", esc(&r.backend)));
        out
    }

    /// evcxr shows a cell's value through this method.
    pub fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT text/html\n{}\nEVCXR_END_CONTENT", self.html());
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.report.text() {
            None => write!(f, "✓ {} passed", self.report.id),
            Some(text) => write!(f, "{}", text.trim_start_matches('\n')),
        }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
