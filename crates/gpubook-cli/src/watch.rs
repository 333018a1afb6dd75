//! `gpubook watch`: grade the current exercise on every save of its files, move on when it
//! passes, and take single keys meanwhile (n next, h hint, l list, q quit).
//!
//! Three threads feed one channel: the file watcher (notify), the key reader (crossterm, in raw
//! mode so a key needs no Enter), and nothing else; the main thread grades and redraws. Raw mode
//! is undone on every way out: return, error, and panic.

use super::render::render;
use super::style::{BOLD, DIM, OK, cmd, paint};
use super::{hint, list};
use anyhow::Context;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use gpubook_course::runner;
use gpubook_course::runner::Course;
use notify::{EventKind, RecursiveMode, Watcher};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Editors save in bursts (write, rename, chmod): wait for this much quiet before grading.
const DEBOUNCE: Duration = Duration::from_millis(150);

enum Msg {
    Changed(Vec<PathBuf>),
    Key(Key),
    WatchFailed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Next,
    Hint,
    List,
    Quit,
}

#[derive(clap::Args)]
pub struct Args {
    /// The exercise to start at, e.g. ch03-vector-add or vector-add (default: the first one not passed yet).
    id: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let mut course = Course::load()?;
    // Event paths come back absolute and resolved; compare them with a root of the same form.
    course.root = course.root.canonicalize().with_context(|| format!("finding {}", course.root.display()))?;
    let first = match a.id.as_deref() {
        Some(id) => course.find(Some(id))?.id.clone(),
        None => match course.current() {
            Some(e) => e.id.clone(),
            None => {
                anstream::print!("{}\n{}\n", list::render(&course, None, ""), list::summary(&course));
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let (tx, rx) = mpsc::channel();
    let _watcher = watch_exercises(&course.root.join("exercises"), tx.clone())?;
    let term = Term::start(tx)?;
    let mut w = Watching { course, term, current: Some(first), body: String::new(), note: String::new() };
    w.grade();
    w.event_loop(&rx);
    Ok(ExitCode::SUCCESS)
}

struct Watching {
    course: Course,
    term: Term,
    /// The exercise being watched; `None` once everything has passed.
    current: Option<String>,
    /// The last grading's outcome, as shown.
    body: String,
    /// A hint or the list, shown under the body until the next grading.
    note: String,
}

impl Watching {
    fn event_loop(&mut self, rx: &Receiver<Msg>) {
        // Keys pressed while a save was being debounced, handled right after it.
        let mut queued = VecDeque::new();
        while let Some(msg) = queued.pop_front().or_else(|| rx.recv().ok()) {
            match msg {
                Msg::Changed(paths) if self.touches(&paths) => {
                    debounce(rx, &mut queued);
                    self.grade();
                }
                Msg::Changed(_) => {}
                Msg::Key(Key::Quit) => return,
                Msg::Key(Key::Next) => self.skip(),
                Msg::Key(Key::Hint) => self.hint(),
                Msg::Key(Key::List) => {
                    self.note = list::render(&self.course, self.current.as_deref(), "current");
                    self.redraw();
                }
                Msg::WatchFailed(e) => {
                    self.note = format!("the file watcher failed: {e}\n(saves may go unnoticed: restart `gpubook watch`)");
                    self.redraw();
                }
            }
        }
    }

    /// Whether a file event concerns the current exercise's files.
    fn touches(&self, paths: &[PathBuf]) -> bool {
        let Some(ex) = self.current.as_deref().and_then(|id| self.course.catalog.get(id)) else {
            return false;
        };
        paths.iter().any(|p| ex.files.iter().any(|f| *p == self.course.exercise_file(f)))
    }

    /// Grades the current exercise; after a pass, the next one at once (it may be solved already),
    /// until one does not pass or none is left.
    fn grade(&mut self) {
        let mut passes = String::new();
        while self.grade_one(&mut passes) {}
    }

    /// Grades the current exercise; true when it passed and the next one should be graded now.
    fn grade_one(&mut self, passes: &mut String) -> bool {
        let Some(ex) = self.current.as_deref().and_then(|id| self.course.catalog.get(id)).cloned() else {
            return false;
        };
        self.note.clear();
        self.term.status(&format!("checking {}…", ex.id));
        let term = &self.term;
        let outcome = runner::grade(&self.course.root, &ex, &mut |step| term.status(&step));
        self.course.reload_progress();
        let mut more = false;
        self.body = match outcome {
            Ok(outcome) if outcome.passed() => {
                passes.push_str(&render(&ex, &outcome));
                let next = self.course.after(&ex.id);
                let then = match next {
                    Some(n) => format!(
                        "\nNext up: {} ({}). Edit {}: it is graded on every save.\n",
                        paint(BOLD, &n.id),
                        n.title,
                        Course::shown_files(n)
                    ),
                    None => format!("\n{}\n", paint(OK, "That was the last open exercise: the whole course is done!")),
                };
                more = next.is_some();
                self.current = next.map(|n| n.id.clone());
                format!("{passes}{then}")
            }
            Ok(outcome) => format!("{passes}{}", render(&ex, &outcome)),
            Err(e) => format!("{passes}error: {e:#}\n"),
        };
        self.redraw();
        more
    }

    /// `n`: the next exercise in the course's order, passed or not.
    fn skip(&mut self) {
        match self.current.as_deref().and_then(|id| self.course.following(id)) {
            Some(next) => {
                self.current = Some(next.id.clone());
                self.grade();
            }
            None => {
                self.note = "This is the last exercise of the course.".into();
                self.redraw();
            }
        }
    }

    fn hint(&mut self) {
        let Some(ex) = self.current.as_deref().and_then(|id| self.course.catalog.get(id)) else {
            return;
        };
        let passed = self.course.done(&ex.id);
        self.note = hint::reveal(&self.course.root, ex, passed, "press h again").unwrap_or_else(|e| format!("error: {e:#}\n"));
        self.redraw();
    }

    fn redraw(&self) {
        let header = match self.current.as_deref().and_then(|id| self.course.catalog.get(id)) {
            Some(ex) => format!(
                "{} · {} ({})\n{}\n\n",
                paint(BOLD, "gpubook watch"),
                ex.id,
                ex.title,
                paint(DIM, format_args!("watching {}", Course::shown_files(ex)))
            ),
            None => format!("{}\n\n", paint(BOLD, "gpubook watch")),
        };
        let note = if self.note.is_empty() { String::new() } else { format!("\n{}", self.note) };
        let keys = if self.term.raw {
            let key = |k: &str, what: &str| format!("{} {what}", paint(BOLD, k));
            [key("n", "next"), key("h", "hint"), key("l", "list"), key("q", "quit")].join(" · ")
        } else {
            format!("keys need a terminal: {} quits, {} shows a hint", paint(BOLD, "Ctrl-C"), cmd("gpubook hint"))
        };
        let footer = format!("\n{}\n{keys}\n", list::summary(&self.course));
        self.term.draw(&format!("{header}{}{note}{footer}", self.body));
    }
}

/// Swallows the rest of a burst of file events; other messages wait in `queued`.
fn debounce(rx: &Receiver<Msg>, queued: &mut VecDeque<Msg>) {
    loop {
        match rx.recv_timeout(DEBOUNCE) {
            Ok(Msg::Changed(_)) => {}
            Ok(other) => queued.push_back(other),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Watches exercises/ as a whole: editors often save by writing a new file and renaming it over
/// the old one, which a watch on the file itself would lose.
fn watch_exercises(dir: &Path, tx: Sender<Msg>) -> anyhow::Result<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let msg = match res {
            // Reads and closes are not saves.
            Ok(ev) if matches!(ev.kind, EventKind::Access(_)) => return,
            Ok(ev) => Msg::Changed(ev.paths),
            Err(e) => Msg::WatchFailed(e.to_string()),
        };
        let _ = tx.send(msg);
    })
    .context("starting the file watcher")?;
    watcher.watch(dir, RecursiveMode::Recursive).with_context(|| format!("watching {}", dir.display()))?;
    Ok(watcher)
}

/// The terminal: raw mode and a key reader when stdin is one, plain lines otherwise (a pipe,
/// a CI log), where only Ctrl-C stops the watch.
struct Term {
    raw: bool,
    clear: bool,
}

impl Term {
    fn start(tx: Sender<Msg>) -> anyhow::Result<Term> {
        let clear = std::io::stdout().is_terminal();
        if !std::io::stdin().is_terminal() {
            return Ok(Term { raw: false, clear });
        }
        crossterm::terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
        // A panic prints its message after the hook runs: restore the terminal first so the
        // message (and the shell after it) is readable. Drop handles every other way out.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::terminal::disable_raw_mode();
            previous(info);
        }));
        std::thread::spawn(move || {
            while let Ok(event) = crossterm::event::read() {
                if let Event::Key(k) = event
                    && let Some(key) = key_of(k)
                    && tx.send(Msg::Key(key)).is_err()
                {
                    return;
                }
            }
        });
        Ok(Term { raw: true, clear })
    }

    /// Replaces the screen with `text` (raw mode needs `\r\n` for a new line).
    fn draw(&self, text: &str) {
        let mut out = anstream::stdout();
        if self.clear {
            let _ = crossterm::execute!(
                std::io::stdout(),
                crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
                crossterm::cursor::MoveTo(0, 0)
            );
        } else {
            let _ = writeln!(out, "{}", "─".repeat(60));
        }
        let text = if self.raw { text.replace('\n', "\r\n") } else { text.to_string() };
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// One line at the bottom saying what is happening now, overwritten by the next.
    fn status(&self, text: &str) {
        let mut out = anstream::stdout();
        let line = paint(DIM, format_args!("⟳ {text}"));
        let _ = if self.clear { write!(out, "\r\x1b[2K{line}") } else { writeln!(out, "{line}") };
        let _ = out.flush();
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        if self.raw {
            let _ = crossterm::terminal::disable_raw_mode();
            anstream::println!();
        }
    }
}

/// The command a key press stands for.
fn key_of(k: KeyEvent) -> Option<Key> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    match k.code {
        // Raw mode turns Ctrl-C into a key like any other: it must still quit.
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some(Key::Quit),
        KeyCode::Char('n') => Some(Key::Next),
        KeyCode::Char('h') => Some(Key::Hint),
        KeyCode::Char('l') => Some(Key::List),
        KeyCode::Char('q') | KeyCode::Esc => Some(Key::Quit),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use gpubook_course::runner::Course;
    fn course(statuses: &[(&str, gpubook_course::progress::Standing)]) -> Course {
        Course::fixture(statuses)
    }
    use super::*;

    #[test]
    fn keys_map_to_commands_and_ctrl_c_quits() {
        let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(key_of(press(KeyCode::Char('n'))), Some(Key::Next));
        assert_eq!(key_of(press(KeyCode::Char('h'))), Some(Key::Hint));
        assert_eq!(key_of(press(KeyCode::Char('l'))), Some(Key::List));
        assert_eq!(key_of(press(KeyCode::Char('q'))), Some(Key::Quit));
        assert_eq!(key_of(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)), Some(Key::Quit));
        assert_eq!(key_of(press(KeyCode::Char('x'))), None);
        let mut release = press(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        assert_eq!(key_of(release), None, "a key counts once, when pressed");
    }

    #[test]
    fn only_the_current_exercises_files_trigger_a_grade() {
        let w = Watching {
            course: course(&[]),
            term: Term { raw: false, clear: false },
            current: Some("ch03-saxpy".into()),
            body: String::new(),
            note: String::new(),
        };
        assert!(w.touches(&[PathBuf::from("/nowhere/exercises/src/ch03-saxpy.rs")]));
        assert!(!w.touches(&[PathBuf::from("/nowhere/exercises/src/ch03-vector-add.rs")]));
        assert!(!w.touches(&[]));
    }

    #[test]
    fn a_burst_of_saves_is_one_change_and_keys_wait_their_turn() {
        let (tx, rx) = mpsc::channel();
        tx.send(Msg::Changed(vec![])).unwrap();
        tx.send(Msg::Key(Key::Hint)).unwrap();
        tx.send(Msg::Changed(vec![])).unwrap();
        let mut queued = VecDeque::new();
        debounce(&rx, &mut queued);
        assert!(rx.try_recv().is_err(), "the burst was swallowed");
        assert!(matches!(queued.pop_front(), Some(Msg::Key(Key::Hint))));
    }
}
