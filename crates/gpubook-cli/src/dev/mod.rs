//! `gpubook dev ...`: the maintainers' commands. `stubs` regenerates the learner's crate (and the
//! scaffolding of both crates) from solutions/ and exercises.toml, or checks it has not drifted;
//! `reports` checks what every untouched stub's grader reported against the committed snapshots
//! (the wording is the product: a change to it shows in review); `architecture` regenerates the
//! tree's own part of docs/architecture.md, or checks it and the layering it draws.

mod architecture;
mod imports;

use anyhow::Context;
use gpubook::paths::root as workspace_root;
use gpubook_course::catalog::Catalog;
use gpubook_course::grade::GradeReport;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Regenerate exercises/ from solutions/ (and both crates' Cargo.toml, lib.rs and tests from
    /// exercises.toml), or --check for drift.
    Stubs {
        /// Only report differences (CI runs this); exit 1 on drift.
        #[arg(long)]
        check: bool,
    },
    /// Check the graders' reports on the untouched stubs: every exercise failed with a report, and
    /// each report reads as its snapshot does (or --write the snapshots).
    /// Regenerate the generated part of docs/architecture.md (--write), or check it is current,
    /// no crate has a loop between its folders, and the crates depend only downward.
    Architecture {
        /// Write the page instead of checking it.
        #[arg(long)]
        write: bool,
        /// Print the lines of Rust of each crate and folder instead.
        #[arg(long)]
        lines: bool,
    },
    Reports {
        /// The folder the reports were written to (GPUBOOK_REPORT_DIR of a `cargo test -p exercises` run).
        #[arg(long)]
        from: PathBuf,
        /// Write the snapshots instead of comparing with them.
        #[arg(long)]
        write: bool,
    },
}

pub fn run(c: Command) -> anyhow::Result<ExitCode> {
    let root = workspace_root();
    match c {
        Command::Stubs { check: true } => {
            let drift = gpubook_course::stubs::drift(&root)?;
            if drift.is_empty() {
                println!("exercises/ and the crates' scaffolding match what solutions/ and exercises.toml generate");
                return Ok(ExitCode::SUCCESS);
            }
            for d in &drift {
                println!("drift: {d}");
            }
            println!("run `gpubook dev stubs` to regenerate them");
            Ok(ExitCode::FAILURE)
        }
        Command::Stubs { check: false } => {
            let n = gpubook_course::stubs::write(&root, None)?;
            println!("wrote {n} generated files under exercises/ and solutions/");
            Ok(ExitCode::SUCCESS)
        }
        Command::Reports { from, write } => reports(&root, &from, write),
        Command::Architecture { lines: true, .. } => {
            print!("{}", architecture::lines(&root)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Architecture { write, .. } => architecture(&root, write),
    }
}

/// The report as a snapshot keeps it: the device line names the machine (its CPU threads, its
/// GPU), so it is replaced by a placeholder; everything else is the wording under review.
fn normalised(report: &str) -> String {
    let lines: Vec<String> = report
        .trim()
        .lines()
        .map(|l| match (l.find("backend: "), l.find("; seed ")) {
            (Some(a), Some(b)) if a < b => format!("{}backend: <device>{}", &l[..a], &l[b..]),
            _ => l.to_string(),
        })
        .collect();
    format!("{}\n", lines.join("\n"))
}

fn reports(root: &Path, from: &Path, write: bool) -> anyhow::Result<ExitCode> {
    let catalog = Catalog::load(root)?;
    let (mut failed, mut passed, mut missing, mut changed) = (0, 0, Vec::new(), Vec::new());
    for ex in &catalog.exercises {
        let Some(report) = GradeReport::read(from, &ex.id)? else {
            missing.push(ex.id.as_str());
            continue;
        };
        if report.passed {
            passed += 1;
            println!("PASSED (a grader that cannot fail?): {}", ex.id);
            continue;
        }
        failed += 1;
        let text = normalised(&report.text().unwrap_or_default());
        let path = ex.stub_report_path(root);
        if write {
            std::fs::create_dir_all(path.parent().expect("has a folder")).with_context(|| format!("creating {}", path.display()))?;
            std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            println!("report of {} differs from {}:\n{text}", ex.id, gpubook::paths::display(&path));
            changed.push(ex.id.as_str());
        }
    }
    let n = catalog.exercises.len();
    println!("exercises: {n} in exercises.toml; untouched stubs: {failed} failed, {passed} passed, {} without a report", missing.len());
    if !missing.is_empty() {
        println!("no report (the test never ran, or its process died): {}", missing.join(", "));
    }
    if !changed.is_empty() {
        println!(
            "{} report(s) read differently from their snapshots: if the new wording is meant, \
             `gpubook dev reports --from {} --write`",
            changed.len(),
            from.display()
        );
    }
    let ok = failed == n && passed == 0 && missing.is_empty() && changed.is_empty();
    if ok {
        println!("ok: every stub fails with its report{}", if write { " (snapshots written)" } else { ", as the snapshots read" });
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `gpubook dev architecture`.
fn architecture(root: &Path, write: bool) -> anyhow::Result<ExitCode> {
    let (path, now, fresh) = architecture::page(root)?;
    if write {
        std::fs::write(&path, &fresh).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote the generated part of {}", gpubook::paths::display(&path));
        return Ok(ExitCode::SUCCESS);
    }
    let mut problems = architecture::layering_problems(&architecture::workspace(root)?);
    for c in architecture::workspace(root)? {
        let src = root.join(&c.dir).join("src");
        for cycle in imports::Graph::of_src(&src).with_context(|| format!("reading {}", src.display()))?.folders().cycles() {
            problems.push(format!("{} has folders that import each other:\n{}", c.name, imports::describe(&cycle)));
        }
    }
    if now != fresh {
        problems.push(format!("{} is stale: run `gpubook dev architecture --write`", gpubook::paths::display(&path)));
    }
    if problems.is_empty() {
        println!("ok: docs/architecture.md is current, no folder loops, the crates depend only downward");
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        println!("{p}");
    }
    Ok(ExitCode::FAILURE)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_device_is_left_out_of_a_snapshot() {
        let report = "\n✗ x is not solved yet: no\n  backend: emulator (CPU, 2 threads); seed 1 (GPUBOOK_SEED=1 reproduces these inputs)\n";
        assert_eq!(
            super::normalised(report),
            "✗ x is not solved yet: no\n  backend: <device>; seed 1 (GPUBOOK_SEED=1 reproduces these inputs)\n"
        );
    }
}
