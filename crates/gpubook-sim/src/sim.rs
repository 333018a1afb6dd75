//! A discrete-event simulator for pipeline schedules.
//!
//! Each rank runs its program in order, one op at a time. An op starts when its rank is free
//! and every input it needs has arrived: produced by another op, plus the point-to-point latency
//! when that op ran on another rank. The clock jumps from one op completion to the next; at each
//! completion, every idle rank looks at its next op again. Nothing else is modelled: no
//! bandwidth, no contention, no kernel jitter, so what remains is the shape of the schedule.
//!
//! When no op can start and some remain, the schedule is broken (a missing, duplicated or
//! misordered op) and [`simulate`] says which op waits for what, instead of returning numbers.
//!
//! The numbers it returns, per rank:
//! - busy: the sum of its ops' durations (an overlapped pair counts `F&B` once);
//! - bubble: makespan minus busy, i.e. all idle time before, between and after its ops, measured
//!   against the whole run (the makespan starts at 0, when the first forward may start);
//! - peak activations: micro-batches whose forward has started on this rank and whose backward
//!   has not yet finished with them, counted in chunks (one stage, one micro-batch). The weight
//!   gradient needs the stage's saved inputs, so an activation lives until `B` or `W` ends, and
//!   within an overlapped pair the forward's new activation exists while the backward still holds
//!   its own.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crate::costs::Costs;
use crate::deps::{op_needs, tasks};
use crate::error::{Need, SimError, Wait};
use crate::op::{Op, Part, StageRef, Task};
use crate::schedule::Schedule;

/// When one op ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub op: Op,
    pub start: f64,
    pub end: f64,
}

/// The outcome of a simulation. Per-rank vectors are indexed by rank.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    pub schedule: Schedule,
    pub costs: Costs,
    /// `spans[rank]`: that rank's ops with their times, in program order.
    pub spans: Vec<Vec<Span>>,
    /// End of the last op on any rank.
    pub makespan: f64,
    pub busy: Vec<f64>,
    /// `makespan - busy[rank]`.
    pub bubbles: Vec<f64>,
    /// The largest per-rank bubble: the number the report's table predicts.
    pub bubble: f64,
    pub peak_activations: Vec<usize>,
    /// Parameters each rank holds, in units of one stage: 2 for DualPipe (one stage of each of
    /// the two model copies) and DualPipeV (both arms of the V), 1 otherwise.
    pub param_copies: usize,
}

impl SimResult {
    /// The largest per-rank peak of activations.
    pub fn max_activations(&self) -> usize {
        self.peak_activations.iter().copied().max().unwrap_or(0)
    }
}

/// Runs `schedule` with `costs`. Fails on invalid costs, an op that names no real chunk or
/// micro-batch, duplicated work, a deadlock, or work that never runs.
pub fn simulate(schedule: &Schedule, costs: &Costs) -> Result<SimResult, SimError> {
    // Timing a schedule is chapter 10's first exercise.
    crate::reference::called("gpubook::sim::simulate");
    costs.check()?;
    let owner = index_tasks(schedule)?;
    let spans = run(schedule, costs, &owner)?;
    check_complete(schedule, &owner)?;

    let makespan = spans.iter().flatten().map(|s| s.end).fold(0.0, f64::max);
    let busy: Vec<f64> = spans.iter().map(|rank| rank.iter().map(|s| s.end - s.start).sum()).collect();
    let bubbles: Vec<f64> = busy.iter().map(|b| makespan - b).collect();
    let bubble = bubbles.iter().copied().fold(0.0, f64::max);
    let peak_activations = (0..schedule.programs.len()).map(|rank| peak_activations(schedule, rank)).collect();
    Ok(SimResult {
        schedule: schedule.clone(),
        costs: *costs,
        spans,
        makespan,
        busy,
        bubbles,
        bubble,
        peak_activations,
        param_copies: schedule.layout.chunks(),
    })
}

/// Where each task is scheduled, as `(rank, op index)`; rejects out-of-range slots and
/// duplicates before anything runs.
fn index_tasks(schedule: &Schedule) -> Result<HashMap<Task, (usize, usize)>, SimError> {
    let layout = &schedule.layout;
    let mut owner = HashMap::new();
    for (rank, program) in schedule.programs.iter().enumerate() {
        for (index, op) in program.iter().enumerate() {
            for slot in op.slots() {
                let problem = if slot.chunk >= layout.chunks() {
                    format!("chunk {} but ranks hold {}", slot.chunk, layout.chunks())
                } else if slot.mb >= layout.microbatches() {
                    format!("micro-batch {} but each direction has {}", slot.mb, layout.microbatches())
                } else {
                    continue;
                };
                return Err(SimError::BadOp { rank, index, op: *op, problem });
            }
            for task in tasks(layout, rank, op) {
                if let Some(&first) = owner.get(&task) {
                    return Err(SimError::Duplicate { task, first, second: (rank, index) });
                }
                owner.insert(task, (rank, index));
            }
        }
    }
    Ok(owner)
}

/// An op completion in the event queue, earliest first.
struct Event {
    time: f64,
    rank: usize,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` pops the largest, we want the earliest (ties by rank).
        other.time.total_cmp(&self.time).then(other.rank.cmp(&self.rank))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

/// The event loop. Returns each rank's spans, or the deadlock.
fn run(schedule: &Schedule, costs: &Costs, owner: &HashMap<Task, (usize, usize)>) -> Result<Vec<Vec<Span>>, SimError> {
    let layout = &schedule.layout;
    let ranks = schedule.programs.len();
    // When each finished task ended, and on which rank.
    let mut done: HashMap<Task, (f64, usize)> = HashMap::new();
    let mut spans: Vec<Vec<Span>> = vec![Vec::new(); ranks];
    let mut running = vec![false; ranks];
    let mut events = BinaryHeap::new();
    let mut now = 0.0;

    loop {
        // Every idle rank looks at its next op. Once all its inputs are done, its start time
        // is fixed (its rank free, every input arrived), so it is booked right away.
        for rank in 0..ranks {
            if running[rank] {
                continue;
            }
            let Some(op) = schedule.programs[rank].get(spans[rank].len()) else {
                continue;
            };
            let free = spans[rank].last().map_or(0.0, |s| s.end);
            let arrivals: Option<Vec<f64>> = op_needs(layout, rank, op)
                .iter()
                .map(|need| done.get(need).map(|&(end, from)| end + if from == rank { 0.0 } else { costs.latency }))
                .collect();
            let Some(arrivals) = arrivals else { continue };
            let start = arrivals.into_iter().fold(free, f64::max);
            let end = start + costs.duration(op);
            spans[rank].push(Span { op: *op, start, end });
            running[rank] = true;
            events.push(Event { time: end, rank });
        }

        let Some(Event { time, rank }) = events.pop() else {
            break;
        };
        now = time;
        running[rank] = false;
        let op = spans[rank].last().expect("a running op has a span").op;
        for task in tasks(layout, rank, &op) {
            done.insert(task, (time, rank));
        }
    }

    let waits: Vec<Wait> = (0..ranks)
        .filter_map(|rank| {
            let index = spans[rank].len();
            let op = *schedule.programs[rank].get(index)?;
            let needs = op_needs(layout, rank, &op)
                .into_iter()
                .filter(|n| !done.contains_key(n))
                .map(|task| Need { task, scheduled_at: owner.get(&task).copied() })
                .collect();
            Some(Wait { rank, index, op, needs })
        })
        .collect();
    if waits.is_empty() { Ok(spans) } else { Err(SimError::Deadlock { time: now, waits }) }
}

/// Every (stage, micro-batch) needs a forward, an input gradient and a weight gradient.
/// Anything missing that another op waited for was already reported as a deadlock; this catches
/// the rest (a dropped `W`, a dropped backward of stage 0).
fn check_complete(schedule: &Schedule, owner: &HashMap<Task, (usize, usize)>) -> Result<(), SimError> {
    let layout = &schedule.layout;
    for pipe in 0..layout.pipes() {
        for stage in 0..layout.stages() {
            for mb in 0..layout.microbatches() {
                for part in [Part::Forward, Part::InputGrad, Part::WeightGrad] {
                    let at = StageRef { pipe, stage };
                    let task = Task { part, at, mb };
                    if !owner.contains_key(&task) {
                        let rank = layout.host(at).0;
                        return Err(SimError::Missing { task, rank });
                    }
                }
            }
        }
    }
    Ok(())
}

/// Walks a rank's program in order: a forward adds an activation (before the op's backward, if
/// any, releases one), a weight gradient releases it.
fn peak_activations(schedule: &Schedule, rank: usize) -> usize {
    let (mut live, mut peak) = (0usize, 0usize);
    for op in &schedule.programs[rank] {
        let parts: Vec<Part> = tasks(&schedule.layout, rank, op).iter().map(|t| t.part).collect();
        live += parts.iter().filter(|p| **p == Part::Forward).count();
        peak = peak.max(live);
        live -= parts.iter().filter(|p| **p == Part::WeightGrad).count();
    }
    peak
}
