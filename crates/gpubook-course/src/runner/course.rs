//! The course as the runner sees it: the catalog (what to do, in order) joined with the progress
//! record (what is done), and the one rule for what to do next.

use crate::catalog::{Catalog, Exercise};
use crate::progress::{Progress, Standing};
use anyhow::bail;
use gpubook::paths::root as workspace_root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Course {
    pub root: PathBuf,
    pub catalog: Catalog,
    pub progress: Progress,
    /// Where each exercise stands, its files read once per load.
    standings: BTreeMap<String, Standing>,
}

impl Course {
    /// The course of this checkout (`GPUBOOK_ROOT`, or the folder above with an `exercises.toml`).
    pub fn load() -> anyhow::Result<Course> {
        let root = workspace_root();
        let catalog = Catalog::load(&root)?;
        let mut course = Course { root, catalog, progress: Progress::default(), standings: BTreeMap::new() };
        course.reload_progress();
        Ok(course)
    }

    /// The runner records each grade: read the record (and the files) again after one ran.
    pub fn reload_progress(&mut self) {
        self.progress = Progress::load(&self.root);
        self.standings = self.catalog.exercises.iter().map(|e| (e.id.clone(), self.progress.standing(&self.root, e))).collect();
    }

    pub fn standing(&self, id: &str) -> Standing {
        self.standings.get(id).copied().unwrap_or(Standing::NotStarted)
    }

    /// Passed, and its files unchanged since.
    pub fn done(&self, id: &str) -> bool {
        self.standing(id) == Standing::Passed
    }

    /// The exercise to work on: the first not passed (or changed since it passed), in order.
    pub fn current(&self) -> Option<&Exercise> {
        self.catalog.exercises.iter().find(|e| !self.done(&e.id))
    }

    /// Where to go once `id` is done: the next not-passed exercise after it, else the first
    /// not-passed one before it (a learner who skipped ahead comes back to what they skipped).
    pub fn after(&self, id: &str) -> Option<&Exercise> {
        let list = &self.catalog.exercises;
        let at = list.iter().position(|e| e.id == id).map_or(0, |i| i + 1);
        list[at..].iter().chain(&list[..at]).find(|e| e.id != id && !self.done(&e.id))
    }

    /// The exercise after `id` in the course's order, passed or not (`n` in watch).
    pub fn following(&self, id: &str) -> Option<&Exercise> {
        let list = &self.catalog.exercises;
        list.iter().position(|e| e.id == id).and_then(|i| list.get(i + 1))
    }

    /// The exercise a command names: its id, or a part of it that only one id contains
    /// (`vector-add` for `ch03-vector-add`); with none, the current exercise.
    pub fn find(&self, query: Option<&str>) -> anyhow::Result<&Exercise> {
        let Some(q) = query else {
            return match self.current() {
                Some(e) => Ok(e),
                None if self.catalog.exercises.is_empty() => {
                    bail!("exercises.toml lists no exercises yet")
                }
                None => bail!("every exercise has passed: name one to work on it again (`gpubook list` shows them)"),
            };
        };
        if let Some(e) = self.catalog.get(q) {
            return Ok(e);
        }
        let matches: Vec<&Exercise> = self.catalog.exercises.iter().filter(|e| e.id.contains(q)).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => bail!("there is no exercise `{q}` (`gpubook list` shows them all)"),
            many => {
                let ids: Vec<&str> = many.iter().map(|e| e.id.as_str()).collect();
                bail!("`{q}` could be any of {}: say which", ids.join(", "))
            }
        }
    }

    /// The learner's copy of one of an exercise's files.
    pub fn exercise_file(&self, rel: &str) -> PathBuf {
        self.root.join("exercises").join(rel)
    }

    /// The files a learner edits for `e`, as they would type them from the root.
    pub fn shown_files(e: &Exercise) -> String {
        let files: Vec<String> = e.files.iter().map(|f| Path::new("exercises").join(f).display().to_string()).collect();
        files.join(", ")
    }

    /// A course of three exercises in two chapters, with the given standings: for the front
    /// ends' tests.
    #[doc(hidden)]
    pub fn fixture(statuses: &[(&str, Standing)]) -> Course {
        let mut toml = String::from("[[chapter]]\nnumber = 3\ntitle = \"SPMD\"\nfolder = \"ch03\"\n");
        toml.push_str("[[chapter]]\nnumber = 4\ntitle = \"Shared\"\nfolder = \"ch04\"\n");
        for id in ["ch03-vector-add", "ch03-saxpy", "ch04-reduce"] {
            toml.push_str(&format!(
                "[[exercise]]\nid = \"{id}\"\nchapter = {}\ntitle = \"{id}\"\nfiles = [\"src/{id}.rs\"]\n\
                 test = \"t\"\nfunction = \"f\"\nconcepts = []\nhints = [\"h1\", \"h2\"]\n",
                &id[2..4].trim_start_matches('0')
            ));
        }
        let catalog: Catalog = toml::from_str(&toml).unwrap();
        let standings = statuses.iter().map(|(id, s)| (id.to_string(), *s)).collect();
        Course { root: PathBuf::from("/nowhere"), catalog, progress: Progress::default(), standings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn course(statuses: &[(&str, Standing)]) -> Course {
        Course::fixture(statuses)
    }

    fn id(e: Option<&Exercise>) -> Option<&str> {
        e.map(|e| e.id.as_str())
    }

    #[test]
    fn current_is_the_first_not_passed() {
        assert_eq!(id(course(&[]).current()), Some("ch03-vector-add"));
        let c = course(&[("ch03-vector-add", Standing::Passed), ("ch03-saxpy", Standing::Failing)]);
        assert_eq!(id(c.current()), Some("ch03-saxpy"));
        let c = course(&[("ch03-vector-add", Standing::Passed), ("ch04-reduce", Standing::Passed)]);
        assert_eq!(id(c.current()), Some("ch03-saxpy"), "a skipped exercise comes first");
        let all = [("ch03-vector-add", Standing::Passed), ("ch03-saxpy", Standing::Passed), ("ch04-reduce", Standing::Passed)];
        assert_eq!(id(course(&all).current()), None);
    }

    #[test]
    fn after_a_pass_comes_the_next_open_one_then_the_skipped_ones() {
        let c = course(&[("ch03-saxpy", Standing::Passed)]);
        assert_eq!(id(c.after("ch03-vector-add")), Some("ch04-reduce"));
        assert_eq!(id(c.after("ch04-reduce")), Some("ch03-vector-add"), "wraps round to what was skipped");
        let c = course(&[("ch03-vector-add", Standing::Passed), ("ch03-saxpy", Standing::Passed)]);
        assert_eq!(id(c.after("ch04-reduce")), None, "nothing else is open");
    }

    #[test]
    fn following_ignores_status_and_stops_at_the_end() {
        let c = course(&[("ch03-saxpy", Standing::Passed)]);
        assert_eq!(id(c.following("ch03-vector-add")), Some("ch03-saxpy"));
        assert_eq!(id(c.following("ch04-reduce")), None);
    }

    #[test]
    fn find_takes_an_id_a_unique_part_or_nothing() {
        let c = course(&[]);
        assert_eq!(c.find(Some("ch03-saxpy")).unwrap().id, "ch03-saxpy");
        assert_eq!(c.find(Some("reduce")).unwrap().id, "ch04-reduce");
        assert_eq!(c.find(None).unwrap().id, "ch03-vector-add");
        assert!(c.find(Some("ch03")).unwrap_err().to_string().contains("could be any of"));
        assert!(c.find(Some("nope")).unwrap_err().to_string().contains("no exercise `nope`"));
    }
}
