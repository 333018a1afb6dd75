//! The exercise catalog: `exercises.toml` is the one list of exercises. The CLI, the book's
//! exercise boxes, the progress record and the stub drift check all read it through here;
//! nothing else keeps a list.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    #[serde(rename = "chapter")]
    pub chapters: Vec<Chapter>,
    #[serde(rename = "exercise", default)]
    pub exercises: Vec<Exercise>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    pub number: u32,
    pub title: String,
    /// The book's folder for this chapter (`book/src/<folder>/`).
    pub folder: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exercise {
    /// `chNN-name`, e.g. `ch03-vector-add`.
    pub id: String,
    pub chapter: u32,
    pub title: String,
    /// Files the learner edits, relative to `exercises/` (the same paths exist under `solutions/`).
    pub files: Vec<String>,
    /// The test that grades it: `tests/<test>.rs`, function `<function>`, which calls the grader
    /// `gpubook_course::grade::<test>::<function>` (test files are generated from these fields).
    pub test: String,
    pub function: String,
    /// The learner's functions the grader takes, in `src/<test>.rs` (default: `[function]`).
    #[serde(default)]
    pub answers: Vec<String>,
    pub concepts: Vec<String>,
    /// From a nudge to nearly the answer.
    pub hints: Vec<String>,
    /// The launch the served book's Run button gives the exercise's kernel, as `gpubook run`
    /// takes it, the file relative to `exercises/`: `"kernels/ch03/vector_add.cu --kernel
    /// vector_add --grid 4 --block 256 --arg f32[1000]:iota ..."` ([`Exercise::launch`]).
    #[serde(default)]
    pub run: Option<String>,
    /// Why the kernel cannot run alone from a page (it needs a host sequence, other ranks'
    /// buffers): shown in the box instead of a Run button.
    #[serde(default)]
    pub no_run: Option<String>,
}

/// An exercise's `run`, taken apart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunLaunch {
    /// Relative to `exercises/`.
    pub file: String,
    pub kernel: String,
    pub grid: String,
    pub block: String,
    pub shared: u32,
    /// The `--arg`s, in order.
    pub args: Vec<String>,
    /// The `--then` launches, in order.
    pub then: Vec<String>,
    /// `--ranks`: ranks sharing the device (each launch once per rank); 1 when not given.
    pub ranks: usize,
}

impl Exercise {
    /// Where the snapshot of the report its untouched stub gets lives, in its chapter's place
    /// beside the graders: `crates/gpubook-course/src/grade/ch03/stub-reports/ch03-vector-add.txt`.
    pub fn stub_report_path(&self, root: &Path) -> PathBuf {
        root.join("crates/gpubook-course/src/grade").join(&self.test).join("stub-reports").join(format!("{}.txt", self.id))
    }
}

impl Exercise {
    /// The `run` launch, checked against `gpubook run`'s grammar; `None` without one.
    pub fn launch(&self) -> Option<anyhow::Result<RunLaunch>> {
        let run = self.run.as_deref()?;
        Some(parse_run(run).with_context(|| format!("exercise `{}`: run = \"{run}\"", self.id)))
    }

    /// The learner's functions the grader takes.
    pub fn answers(&self) -> Vec<&str> {
        if self.answers.is_empty() { vec![self.function.as_str()] } else { self.answers.iter().map(String::as_str).collect() }
    }
}

/// `FILE --kernel K --grid G --block B [--shared N] [--ranks R] [--arg A]... [--then 'LAUNCH']...`, words split
/// as a shell would with single quotes.
fn parse_run(text: &str) -> anyhow::Result<RunLaunch> {
    use gpubook_labs::launch_spec::{parse_arg, parse_launch, spec::parse_dims};
    let words = shell_words(text)?;
    let mut words = words.into_iter();
    let mut r =
        RunLaunch { file: words.next().context("names no file")?, grid: "1".into(), block: "32".into(), ranks: 1, ..Default::default() };
    if !r.file.ends_with(".cu") || r.file.starts_with('-') {
        bail!("`{}` is not a .cu file", r.file);
    }
    let here = Path::new(".");
    while let Some(flag) = words.next() {
        let value = words.next().with_context(|| format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--kernel" => r.kernel = value,
            "--grid" => r.grid = value,
            "--block" => r.block = value,
            "--shared" => r.shared = value.parse().with_context(|| format!("--shared `{value}` is no number of bytes"))?,
            "--arg" => r.args.push(value),
            "--then" => r.then.push(value),
            "--ranks" => {
                r.ranks = value
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .with_context(|| format!("--ranks `{value}` is no number of ranks (1 or more)"))?
            }
            other => bail!("`{other}`: a run takes --kernel, --grid, --block, --shared, --arg, --then and --ranks"),
        }
    }
    if r.kernel.is_empty() {
        bail!("no --kernel");
    }
    parse_dims(&r.grid).map_err(anyhow::Error::msg)?;
    parse_dims(&r.block).map_err(anyhow::Error::msg)?;
    for a in &r.args {
        parse_arg(a, here).map_err(|e| anyhow::anyhow!("--arg `{a}`: {e}"))?;
    }
    for t in &r.then {
        parse_launch(t, here).map_err(|e| anyhow::anyhow!("--then `{t}`: {e}"))?;
    }
    Ok(r)
}

/// Words separated by spaces; `'...'` keeps spaces inside one word.
fn shell_words(text: &str) -> anyhow::Result<Vec<String>> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in text.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if quoted {
        bail!("a ' is not closed");
    }
    if any {
        words.push(word);
    }
    Ok(words)
}

impl Catalog {
    /// Reads `exercises.toml` at the workspace root.
    pub fn load(root: &Path) -> anyhow::Result<Catalog> {
        let path = root.join("exercises.toml");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let catalog: Catalog = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        catalog.validate()?;
        Ok(catalog)
    }

    /// The catalog of this checkout (found from the working directory or the build's root).
    pub fn load_default() -> anyhow::Result<Catalog> {
        Catalog::load(&gpubook::paths::root())
    }

    pub fn get(&self, id: &str) -> Option<&Exercise> {
        self.exercises.iter().find(|e| e.id == id)
    }

    /// The exercises graded by `tests/<test>.rs`, in order.
    pub fn in_test<'a>(&'a self, test: &'a str) -> impl Iterator<Item = &'a Exercise> + 'a {
        self.exercises.iter().filter(move |e| e.test == test)
    }

    /// Every test file's name (`ch03` for `tests/ch03.rs`), in the course's order.
    pub fn tests(&self) -> Vec<&str> {
        let mut tests: Vec<&str> = Vec::new();
        for e in &self.exercises {
            if !tests.contains(&e.test.as_str()) {
                tests.push(&e.test);
            }
        }
        tests
    }

    pub fn chapter(&self, number: u32) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.number == number)
    }

    fn validate(&self) -> anyhow::Result<()> {
        let mut seen = std::collections::HashSet::new();
        for e in &self.exercises {
            if !seen.insert(&e.id) {
                bail!("exercises.toml: exercise `{}` is listed twice", e.id);
            }
            if self.chapter(e.chapter).is_none() {
                bail!("exercises.toml: exercise `{}` names chapter {} which has no [[chapter]] entry", e.id, e.chapter);
            }
            if !e.id.starts_with(&format!("ch{:02}-", e.chapter)) {
                bail!("exercises.toml: exercise `{}` should start with `ch{:02}-`", e.id, e.chapter);
            }
            if e.test != format!("ch{:02}", e.chapter) {
                bail!("exercises.toml: exercise `{}` should be graded by test `ch{:02}`", e.id, e.chapter);
            }
            if e.hints.is_empty() || e.files.is_empty() {
                bail!("exercises.toml: exercise `{}` needs at least one file and one hint", e.id);
            }
            if e.run.is_some() && e.no_run.is_some() {
                bail!("exercises.toml: exercise `{}` has both `run` and `no_run`", e.id);
            }
            if let Some(launch) = e.launch() {
                let launch = launch?;
                if !e.files.contains(&launch.file) {
                    bail!("exercises.toml: exercise `{}` runs `{}`, which is not one of its files", e.id, launch.file);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_taken_apart_as_gpubook_run_takes_it() {
        let r = parse_run(
            "kernels/a.cu --kernel k --grid 2,3 --block 16,16 --shared 64 --arg f32[10]:iota --arg i32=10 --then 'k2 grid=1 block=32 @x'",
        )
        .unwrap();
        assert_eq!(
            (r.file.as_str(), r.kernel.as_str(), r.grid.as_str(), r.block.as_str(), r.shared),
            ("kernels/a.cu", "k", "2,3", "16,16", 64)
        );
        assert_eq!(r.args, ["f32[10]:iota", "i32=10"]);
        assert_eq!(r.then, ["k2 grid=1 block=32 @x"]);
        assert!(parse_run("kernels/a.cu --grid 1").is_err(), "no kernel");
        assert!(parse_run("kernels/a.cu --kernel k --arg f32[10]:nonsense").is_err());
        assert!(parse_run("kernels/a.cu --kernel k --path /etc").is_err());
        assert!(parse_run("kernels/a.cu --kernel k --then 'k2").is_err());
        assert!(parse_run("src/a.rs --kernel k").is_err());
    }
}
