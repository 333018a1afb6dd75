//! Chapter 10: pipeline parallelism, from 1F1B to zero bubble. These exercises run no kernels:
//! they are graded against `gpubook::sim`, whose simulator and generators are the reference.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::words::count;
use super::{Failure, grade};
use gpubook::sim::report::num;
use gpubook::sim::{Costs, Layout, Op, OpKind as SimOp, Schedule, ScheduleKind, SimError, SimResult, simulate};

/// `bubbles(programs, costs) -> per-rank bubble` for single-chunk schedules (1F1B, ZB1P).
pub fn bubbles(f: impl Fn(&[Vec<Op>], &Costs) -> Vec<f64>) -> GradeReport {
    grade("ch10-bubbles", |ctx| {
        // (PP, N, F, B, W): where the report's formulas hold, where ZB1P's does not (W > F), few
        // micro-batches (N < PP), and one random case from the seed.
        let mut cases = vec![
            (4, 8, 2.0, 4.0, 2.0),
            (8, 20, 1.0, 3.0, 2.0),
            (4, 2, 1.0, 2.0, 1.0),
            (1, 3, 1.0, 2.0, 0.5),
            (6, 9, 3.0, 4.0, 1.0),
            (2, 5, 1.0, 6.0, 3.0),
        ];
        let pp = ctx.rng.usize(2, 17);
        let b = ctx.rng.usize(2, 9) as f64;
        cases.push((pp, ctx.rng.usize(1, 3 * pp), ctx.rng.usize(1, 6) as f64, b, ctx.rng.usize(0, b as usize + 1) as f64));
        for (pp, n, fc, bc, wc) in cases {
            for kind in [ScheduleKind::OneFOneB, ScheduleKind::Zb1p] {
                let costs = Costs::new(fc, bc, wc, fc + bc);
                let reference = reference(kind, pp, n, &costs);
                let input = format!("{kind}, PP = {pp}, N = {n}, F = {fc}, B = {bc}, W = {wc}");
                let got = ctx.call(|| Ok(f(&reference.schedule.programs, &costs))).map_err(|e| e.or_input(&input))?;
                check_bubbles(&got, &reference).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

fn reference(kind: ScheduleKind, pp: usize, n: usize, costs: &Costs) -> SimResult {
    let schedule = kind.generate(pp, n).expect("the grader's shapes are valid");
    simulate(&schedule, costs).expect("the reference schedules run")
}

fn check_bubbles(got: &[f64], r: &SimResult) -> Result<(), Failure> {
    let want = &r.bubbles;
    if got.len() != want.len() {
        return Err(Failure::new(format!("{} came back for {}", count(got.len(), "bubble"), count(want.len(), "rank")))
            .concept("one bubble per rank: programs[rank] is that rank's list of ops"));
    }
    let Some(rank) = (0..want.len()).find(|&i| (got[i] - want[i]).abs() > 1e-9) else { return Ok(()) };
    let (g, w) = (got[rank], want[rank]);
    let first_start = r.spans[rank].first().map_or(0.0, |s| s.start);
    let last_end = r.spans[rank].last().map_or(0.0, |s| s.end);
    let gaps = last_end - first_start - r.busy[rank];
    let kind = r.schedule.kind;
    let c = &r.costs;
    let mut failure = Failure::new(format!("rank {rank}'s bubble: you said {}, the schedule idles {}", num(g), num(w)))
        .detail(format!("your bubbles:       {}", list(got)))
        .detail(format!("simulated bubbles:  {}", list(want)))
        .detail(format!(
            "rank {rank}: makespan {}, busy {}; its first op starts at {}, its last ends at {}",
            num(r.makespan),
            num(r.busy[rank]),
            num(first_start),
            num(last_end)
        ));
    let formula = kind.formula_bubble(r.schedule.pp(), c);
    failure = if (g - gaps).abs() < 1e-9 && (gaps - w).abs() > 1e-9 {
        failure.concept(
            "the bubble is all of a rank's idle time from 0 to the makespan: the wait before its first op \
             (warm-up) and after its last (cool-down) count, not only the gaps between ops",
        )
    } else if (g - formula).abs() < 1e-9 {
        failure.concept(format!(
            "{kind}'s formula {} = {} holds only for some costs (for ZB1P: W ≤ F and W ≤ B − W, so that each \
             weight gradient fits the gap it fills); time the ops instead: each starts once its rank is free and \
             its inputs have ended",
            kind.bubble_formula(),
            num(formula)
        ))
    } else {
        failure.concept(
            "a pipeline's timing: each op starts when its rank is free and its inputs have ended (F after the \
             previous stage's F, B or Bz after this stage's F and the next stage's input gradient, W after its \
             Bz); bubble = makespan − the rank's busy time",
        )
    };
    Err(failure)
}

fn list(v: &[f64]) -> String {
    v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ")
}

/// `one_f_one_b(pp, n) -> programs`.
pub fn one_f_one_b(f: impl Fn(usize, usize) -> Vec<Vec<Op>>) -> GradeReport {
    grade("ch10-one-f-one-b", |ctx| {
        let shapes = [(4, 8), (1, 3), (2, 1), (4, 2), (3, 7), (8, 20), (ctx.rng.usize(2, 17), ctx.rng.usize(1, 65))];
        for (pp, n) in shapes {
            let input = format!("PP = {pp}, N = {n}");
            let programs = ctx.call(|| Ok(f(pp, n))).map_err(|e| e.or_input(&input))?;
            let reference = ScheduleKind::OneFOneB.generate(pp, n).expect("a valid shape");
            let layout = Layout::Linear { ranks: pp, microbatches: n };
            check_schedule(&reference, layout, programs, &ONE_F_ONE_B).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// What each exercise's messages say about its schedule.
pub(crate) struct Teaching {
    /// The idea the schedule is built on, for differences no specific rule explains.
    pub shape: &'static str,
    /// Why a simulation deadlocks.
    pub deadlock: &'static str,
}

const ONE_F_ONE_B: Teaching = Teaching {
    shape: "1F1B on rank r: PP-1-r forwards (warm-up), then one forward and one backward in turn (steady \
            state), then the remaining backwards (cool-down); with N < PP-1-r, all N forwards, then all N backwards",
    deadlock: "an op can only run once what it needs has run: a backward after this stage's forward of the same \
               micro-batch, and after the next stage's backward",
};

/// Costs the schedules are simulated with: the chapter's, and one where W is large.
const COSTS: [Costs; 2] =
    [Costs { f: 2.0, b: 4.0, w: 2.0, fb: 5.0, latency: 0.0 }, Costs { f: 1.0, b: 3.0, w: 2.0, fb: 3.0, latency: 0.0 }];

/// Checks the learner's programs against `reference`: one per rank, a simulation that runs (no
/// deadlock, nothing missing or twice), the exact op lists, and the reference's bubble and
/// activation peak. Shared with chapter 11's DualPipe exercise.
pub(crate) fn check_schedule(reference: &Schedule, layout: Layout, programs: Vec<Vec<Op>>, teach: &Teaching) -> Result<(), Failure> {
    if programs.len() != reference.programs.len() {
        return Err(Failure::new(format!(
            "{} came back for {}",
            count(programs.len(), "program"),
            count(reference.programs.len(), "rank")
        ))
        .concept("one program per rank: element r of the result is rank r's list of ops, in the order it runs them"));
    }
    let theirs = Schedule { kind: reference.kind, layout, programs };
    // Whether a schedule deadlocks does not depend on the costs: one simulation tells.
    if let Err(e) = simulate(&theirs, &COSTS[0]) {
        let failure = match &e {
            SimError::Deadlock { .. } => Failure::new("the schedule deadlocks: no rank can start its next op").concept(teach.deadlock),
            _ => Failure::new(format!("the simulator refuses the schedule: {}", first_line(&e.to_string()))).concept(
                "every (stage, micro-batch) needs exactly one forward, one input gradient and one weight gradient \
                 (B computes both gradients; Bz and a later W split them)",
            ),
        };
        return Err(failure.detail(e.to_string()));
    }
    if let Some((rank, index)) = first_difference(&reference.programs, &theirs.programs) {
        return Err(difference(reference, &theirs, rank, index, teach));
    }
    for costs in COSTS {
        let (want, got) = (simulate(reference, &costs).expect("the reference runs"), simulate(&theirs, &costs).expect("it ran above"));
        if got.bubble != want.bubble || got.peak_activations != want.peak_activations {
            return Err(Failure::new(format!(
                "the same op lists simulate to bubble {} and activations {:?}, not {} and {:?}",
                num(got.bubble),
                got.peak_activations,
                num(want.bubble),
                want.peak_activations
            ))
            .concept("the simulator is deterministic: this is a bug in gpubook, please report it"));
        }
    }
    Ok(())
}

/// Where the learner's programs first leave the reference, what that costs in the simulation,
/// and the idea the difference points to.
fn difference(reference: &Schedule, theirs: &Schedule, rank: usize, index: usize, teach: &Teaching) -> Failure {
    let with_chunk = reference.layout.chunks() > 1;
    let show = |op: Option<&Op>| op.map_or("nothing (the program has ended)".to_string(), |op| describe(op, with_chunk));
    let (w, g) = (reference.programs[rank].get(index), theirs.programs[rank].get(index));
    let mut failure = Failure::new(format!("rank {rank} op #{index}: expected {}, got {}", show(w), show(g)))
        .detail(format!("expected rank {rank}: {}", reference.rank_notation(rank)))
        .detail(format!("your rank {rank}:     {}", theirs.rank_notation(rank)));
    let mut more_memory = None;
    for costs in COSTS {
        let (want, got) = (simulate(reference, &costs).expect("the reference runs"), simulate(theirs, &costs).expect("it ran"));
        failure = failure.detail(format!(
            "simulated with F = {}, B = {}, W = {}, F&B = {}: bubble {} (the schedule's {}), peak activations {} (the schedule's {})",
            num(costs.f),
            num(costs.b),
            num(costs.w),
            num(costs.fb),
            num(got.bubble),
            num(want.bubble),
            got.max_activations(),
            want.max_activations()
        ));
        if got.max_activations() > want.max_activations() {
            more_memory = Some((got.max_activations(), want.max_activations()));
        }
    }
    let specific = if let Some((got, want)) = more_memory {
        Some(format!(
            "activation memory: your order keeps {got} micro-batches' activations alive on one rank where the schedule \
             needs {want}; a backward frees its micro-batch's activations, so backwards start as soon as the schedule allows"
        ))
    } else {
        match (w.map(Op::kind), g.map(Op::kind)) {
            (Some(SimOp::Bz | SimOp::W), _) | (_, Some(SimOp::Bz | SimOp::W)) => Some(
                "the zero-bubble split: a backward run as Bz sends its input gradient upstream at once, and its W \
                 (which nobody waits for) runs later, where the rank would otherwise idle"
                    .to_string(),
            ),
            (Some(SimOp::Pair), _) | (_, Some(SimOp::Pair)) => Some(
                "overlapped pairs: (F0B1) runs a forward of one direction beside a backward of the other, so each hides \
                 the other's communication"
                    .to_string(),
            ),
            _ => None,
        }
    };
    match specific {
        Some(concept) => failure.concept(concept).detail(format!("the schedule: {}", teach.shape)),
        None => failure.concept(teach.shape),
    }
}

/// The first (rank, op index) where two sets of programs differ.
fn first_difference(want: &[Vec<Op>], got: &[Vec<Op>]) -> Option<(usize, usize)> {
    want.iter().zip(got).enumerate().find_map(|(rank, (w, g))| {
        let n = w.len().max(g.len());
        (0..n).find(|&i| w.get(i) != g.get(i)).map(|i| (rank, i))
    })
}

/// "`F1` (micro-batch 3)", "`(F0B1)` (micro-batches 4 and 2)".
fn describe(op: &Op, with_chunk: bool) -> String {
    let mbs: Vec<String> = op.slots().iter().map(|s| s.mb.to_string()).collect();
    let note = match op {
        Op::W(_) => format!("the weight gradient of micro-batch {}", mbs[0]),
        Op::Pair(..) => format!("micro-batches {} and {}", mbs[0], mbs[1]),
        _ => format!("micro-batch {}", mbs[0]),
    };
    format!("`{}` ({note})", op.notation(with_chunk))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
