//! Which work is ordered before which, across streams: vector clocks over the API's own calls.
//!
//! Each stream counts its operations; each stream (and the host) keeps a clock saying how far
//! into every other stream it is known to be ordered (through events, joins and synchronisation).
//! Before an operation touches a buffer, every earlier touch of an overlapping byte range on
//! another stream (with at least one write) must be ordered before it. If not, the API either
//! inserts the event wait itself (automatic synchronisation, the default, as cudarc does) or,
//! with automatic synchronisation off, refuses with a `Hazard` that names both operations.
//! The same bookkeeping runs on a GPU and on the emulator.

use super::ids::{BufferId, EventId, StreamId};
use std::collections::HashMap;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Clock(Vec<u64>);

impl Clock {
    fn get(&self, s: StreamId) -> u64 {
        self.0.get(s as usize).copied().unwrap_or(0)
    }
    fn raise(&mut self, s: StreamId, v: u64) {
        let i = s as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = self.0[i].max(v);
    }
    fn merge(&mut self, other: &Clock) {
        for (i, &v) in other.0.iter().enumerate() {
            self.raise(i as StreamId, v);
        }
    }
}

/// One touch of device memory by an operation.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub buffer: BufferId,
    pub start: usize,
    pub end: usize,
    pub write: bool,
    pub label: String,
}

#[derive(Debug, Clone)]
struct Touch {
    stream: StreamId,
    seq: u64,
    write: bool,
    start: usize,
    end: usize,
    /// Completes when the operation does; automatic synchronisation waits on it.
    event: EventId,
    what: String,
}

/// An event wait the caller must issue before the operation (automatic synchronisation).
#[derive(Debug)]
pub(crate) struct Wait {
    pub event: EventId,
}

#[derive(Default)]
pub(crate) struct Ordering {
    streams: HashMap<StreamId, Clock>,
    host: Clock,
    events: HashMap<EventId, Clock>,
    touches: HashMap<BufferId, Vec<Touch>>,
}

/// At most this many touches are remembered per buffer (the newest).
const MAX_TOUCHES: usize = 256;

impl Ordering {
    fn clock(&mut self, s: StreamId) -> &mut Clock {
        self.streams.entry(s).or_default()
    }

    /// Checks `accesses` by an operation about to be issued on `stream`. Returns the waits that
    /// make it safe (`auto`), or a description of the first hazard.
    pub fn before(&mut self, stream: StreamId, what: &str, accesses: &[Access], auto: bool) -> Result<Vec<Wait>, String> {
        let host = self.host.clone();
        let mut clock = self.clock(stream).clone();
        clock.merge(&host); // the host issues work in program order
        let mut waits = Vec::new();
        for a in accesses {
            for t in self.touches.get(&a.buffer).into_iter().flatten() {
                let conflicts = t.stream != stream && (t.write || a.write) && t.start < a.end && a.start < t.end;
                if !conflicts || clock.get(t.stream) >= t.seq {
                    continue;
                }
                if !auto {
                    return Err(hazard_message(a, t, what, stream));
                }
                waits.push(Wait { event: t.event });
                clock.raise(t.stream, t.seq);
            }
        }
        *self.clock(stream) = clock;
        Ok(waits)
    }

    /// Records that the operation checked by `before` was issued and completes with `event`.
    pub fn after(&mut self, stream: StreamId, what: &str, accesses: &[Access], event: EventId) -> u64 {
        let clock = self.clock(stream);
        let seq = clock.get(stream) + 1;
        clock.raise(stream, seq);
        let clock = clock.clone();
        let host = self.host.clone();
        for a in accesses {
            let list = self.touches.entry(a.buffer).or_default();
            // A touch every later operation is ordered after can never conflict again, and a touch
            // that this write covers and is ordered after is superseded by it.
            list.retain(|t| {
                let ordered = clock.get(t.stream) >= t.seq;
                let covered = a.write && a.start <= t.start && t.end <= a.end;
                host.get(t.stream) < t.seq && !(ordered && covered)
            });
            list.push(Touch { stream, seq, write: a.write, start: a.start, end: a.end, event, what: what.to_string() });
            if list.len() > MAX_TOUCHES {
                list.remove(0);
            }
        }
        seq
    }

    /// An event recorded on `stream` carries the stream's clock.
    pub fn record(&mut self, stream: StreamId, event: EventId) {
        let host = self.host.clone();
        let c = self.clock(stream);
        c.merge(&host);
        let c = c.clone();
        self.events.insert(event, c);
    }

    /// `stream` waits for `event`: everything ordered before the event is now ordered before it.
    pub fn wait(&mut self, stream: StreamId, event: EventId) {
        if let Some(e) = self.events.get(&event).cloned() {
            self.clock(stream).merge(&e);
        }
    }

    /// The host waited for everything issued so far on `stream`.
    pub fn host_synchronized_stream(&mut self, stream: StreamId) {
        let c = self.clock(stream).clone();
        self.host.merge(&c);
    }

    pub fn host_synchronized_event(&mut self, event: EventId) {
        if let Some(e) = self.events.get(&event).cloned() {
            self.host.merge(&e);
        }
    }

    pub fn host_synchronized_device(&mut self) {
        let all: Vec<Clock> = self.streams.values().cloned().collect();
        for c in &all {
            self.host.merge(c);
        }
    }

    pub fn forget_buffer(&mut self, buffer: BufferId) {
        self.touches.remove(&buffer);
    }

    /// Events still needed by automatic synchronisation (the trace must not recycle them).
    pub fn live_events(&self) -> impl Iterator<Item = EventId> + '_ {
        self.touches.values().flatten().map(|t| t.event).chain(self.events.keys().copied())
    }

    pub fn forget_event(&mut self, event: EventId) {
        self.events.remove(&event);
    }

    /// Device work on `buffer` that the host is not yet ordered after and that conflicts with a
    /// host read (`write` false) or write of it: what the host must wait for before touching
    /// mapped host memory.
    pub fn host_unordered(&self, buffer: BufferId, write: bool) -> Vec<Unordered> {
        let touches = self.touches.get(&buffer).into_iter().flatten();
        touches
            .filter(|t| (t.write || write) && self.host.get(t.stream) < t.seq)
            .map(|t| Unordered { stream: t.stream, seq: t.seq, event: t.event, what: t.what.clone(), write: t.write })
            .collect()
    }

    /// The host waited for operation `seq` of `stream` (and so for all before it there).
    pub fn host_reached(&mut self, stream: StreamId, seq: u64) {
        self.host.raise(stream, seq);
    }
}

/// A device operation the host has not waited for (see [`Ordering::host_unordered`]).
#[derive(Debug, Clone)]
pub(crate) struct Unordered {
    pub stream: StreamId,
    pub seq: u64,
    pub event: EventId,
    pub what: String,
    pub write: bool,
}

fn hazard_message(a: &Access, t: &Touch, what: &str, stream: StreamId) -> String {
    let (earlier, now) = (if t.write { "wrote" } else { "read" }, if a.write { "writes" } else { "reads" });
    format!(
        "`{what}` on stream {stream} {now} buffer `{}` (bytes {}..{}), which `{}` on stream {} {earlier} \
         (bytes {}..{}), and nothing orders the two.\n  fix: record an event on stream {} after `{}` and \
         make stream {stream} wait on it (`let ev = s{}.record_event()?; s{stream}.wait(&ev)?;`), or \
         synchronize stream {} first",
        a.label, a.start, a.end, t.what, t.stream, t.start, t.end, t.stream, t.what, t.stream, t.stream
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(write: bool) -> Vec<Access> {
        vec![Access { buffer: 1, start: 0, end: 64, write, label: "x".into() }]
    }

    #[test]
    fn unordered_write_then_read_is_a_hazard() {
        let mut o = Ordering::default();
        assert!(o.before(1, "fill", &acc(true), false).unwrap().is_empty());
        o.after(1, "fill", &acc(true), 10);
        let err = o.before(2, "copy out", &acc(false), false).unwrap_err();
        assert!(err.contains("`fill` on stream 1 wrote"), "{err}");
    }

    #[test]
    fn an_event_wait_orders_the_streams() {
        let mut o = Ordering::default();
        o.before(1, "fill", &acc(true), false).unwrap();
        o.after(1, "fill", &acc(true), 10);
        o.record(1, 11);
        o.wait(2, 11);
        assert!(o.before(2, "copy out", &acc(false), false).is_ok());
    }

    #[test]
    fn automatic_sync_returns_the_wait() {
        let mut o = Ordering::default();
        o.before(1, "fill", &acc(true), true).unwrap();
        o.after(1, "fill", &acc(true), 10);
        let waits = o.before(2, "copy out", &acc(false), true).unwrap();
        assert_eq!(waits.len(), 1);
        assert_eq!(waits[0].event, 10);
    }

    #[test]
    fn reads_on_two_streams_do_not_conflict_and_host_sync_orders() {
        let mut o = Ordering::default();
        o.before(1, "a", &acc(false), false).unwrap();
        o.after(1, "a", &acc(false), 1);
        assert!(o.before(2, "b", &acc(false), false).is_ok());
        o.after(2, "b", &acc(false), 2);
        assert!(o.before(3, "c", &acc(true), false).is_err());
        o.host_synchronized_device();
        assert!(o.before(3, "c", &acc(true), false).is_ok());
    }

    #[test]
    fn the_host_must_wait_for_device_writes_before_reading() {
        let mut o = Ordering::default();
        o.before(1, "kernel", &acc(true), false).unwrap();
        o.after(1, "kernel", &acc(true), 7);
        let pending = o.host_unordered(1, false);
        assert_eq!((pending.len(), pending[0].event, pending[0].what.as_str()), (1, 7, "kernel"));
        o.host_reached(pending[0].stream, pending[0].seq);
        assert!(o.host_unordered(1, false).is_empty());
    }

    #[test]
    fn disjoint_ranges_do_not_conflict() {
        let mut o = Ordering::default();
        let lo = vec![Access { buffer: 1, start: 0, end: 32, write: true, label: "x".into() }];
        let hi = vec![Access { buffer: 1, start: 32, end: 64, write: true, label: "x".into() }];
        o.before(1, "a", &lo, false).unwrap();
        o.after(1, "a", &lo, 1);
        assert!(o.before(2, "b", &hi, false).is_ok());
    }
}
