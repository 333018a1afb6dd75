//! mdbook reports some problems (an `{{#include}}` of a missing file or anchor, a bad link in
//! SUMMARY.md) through `tracing` and carries on. This prints them (warnings and errors, as
//! `WARN`/`ERROR` lines) and counts the errors, so a build with any fails.
//!
//! The count is per thread: mdbook builds on the calling thread, so two builds at once (tests in
//! parallel) never see each other's errors.

use std::cell::Cell;
use std::sync::Once;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt};

thread_local! {
    static ERRORS: Cell<usize> = const { Cell::new(0) };
}
static INIT: Once = Once::new();

struct CountErrors;

impl<S: Subscriber> Layer<S> for CountErrors {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() == Level::ERROR {
            ERRORS.with(|n| n.set(n.get() + 1));
        }
    }
}

/// Installs the subscriber (once per process; later calls do nothing).
pub fn init() {
    INIT.call_once(|| {
        let print =
            tracing_subscriber::fmt::layer().with_writer(std::io::stderr).without_time().with_target(false).with_filter(LevelFilter::WARN);
        let subscriber = tracing_subscriber::registry().with(print).with(CountErrors);
        // Another subscriber already installed (a test harness) is fine: we only lose the count.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// Errors reported so far on this thread.
pub fn errors() -> usize {
    ERRORS.with(Cell::get)
}
