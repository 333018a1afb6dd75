//! The exercise catalog: `exercises.toml` is the one list of exercises. The CLI, the book's
//! exercise boxes, the progress record and the stub drift check all read it through here;
//! nothing else keeps a list.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::path::Path;

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
    /// `gpubook::grade::<test>::<function>` (test files are generated from these fields).
    pub test: String,
    pub function: String,
    /// The learner's functions the grader takes, in `src/<test>.rs` (default: `[function]`).
    #[serde(default)]
    pub answers: Vec<String>,
    pub concepts: Vec<String>,
    /// From a nudge to nearly the answer.
    pub hints: Vec<String>,
}

impl Exercise {
    /// The learner's functions the grader takes.
    pub fn answers(&self) -> Vec<&str> {
        if self.answers.is_empty() { vec![self.function.as_str()] } else { self.answers.iter().map(String::as_str).collect() }
    }
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
        Catalog::load(&crate::paths::root())
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
        }
        Ok(())
    }
}
