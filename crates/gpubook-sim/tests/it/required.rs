//! The figures the chapter quotes, reproduced by the simulator.
//!
//! How the numbers are counted (see `gpubook_sim::sim`):
//! - B is the full backward and includes W, so a micro-batch costs F+B per stage whatever the
//!   split: 1F1B at PP=4, N=8, F=2, B=4 keeps each rank busy N(F+B) = 48, and its makespan
//!   66 = 48 + (PP-1)(F+B).
//! - A rank's bubble is the makespan minus its busy time (idle at the start, in the middle and at
//!   the end alike); "bubble" is the largest over ranks. An overlapped pair is busy for F&B.
//! - Activations are counted per rank in micro-batches of one stage, from a forward's start until
//!   the op that finishes with them (B, or W after Bz), a pair's forward counting before its
//!   backward releases.

use gpubook_sim::{Costs, ScheduleKind, SimResult, simulate};

fn run(kind: ScheduleKind, pp: usize, n: usize, costs: Costs) -> SimResult {
    let schedule = kind.generate(pp, n).expect("a valid shape");
    simulate(&schedule, &costs).expect("a valid schedule")
}

#[test]
fn pp4_n8_bubbles_and_makespans() {
    let c = Costs::new(2.0, 4.0, 2.0, 5.0);
    for (kind, bubble, makespan) in
        [(ScheduleKind::OneFOneB, 18.0, 66.0), (ScheduleKind::Zb1p, 6.0, 54.0), (ScheduleKind::DualPipe, 3.0, 48.0)]
    {
        let r = run(kind, 4, 8, c);
        assert_eq!((r.bubble, r.makespan), (bubble, makespan), "{kind}");
        assert_eq!(r.bubble, kind.formula_bubble(4, &c), "{kind} matches its formula here");
    }
}

#[test]
fn pp8_n20_bubbles_and_makespans() {
    let c = Costs::new(1.0, 2.0, 1.0, 3.0);
    for (kind, bubble, makespan) in [(ScheduleKind::OneFOneB, 21.0, 81.0), (ScheduleKind::DualPipe, 6.0, 66.0)] {
        let r = run(kind, 8, 20, c);
        assert_eq!((r.bubble, r.makespan), (bubble, makespan), "{kind}");
    }
}

#[test]
fn one_f_one_b_makespan_is_work_plus_bubble() {
    let r = run(ScheduleKind::OneFOneB, 4, 8, Costs::new(2.0, 4.0, 2.0, 6.0));
    assert_eq!(r.busy, vec![48.0; 4]);
    assert_eq!(r.bubbles, vec![18.0; 4]);
}

#[test]
fn dualpipe_pp4_n8_programs() {
    let s = ScheduleKind::DualPipe.generate(4, 8).unwrap();
    let edge = "F0 F0 F0 F1 B1z W F1 (F0B1) (F1B0) B1 (F1B0) B1 B0z W B0z W";
    let middle = "F0 F1 F0 F1 F0 B1 (F1B0) (F0B1) (F1B0) B1 B0 B1z B0z W W";
    assert_eq!(s.rank_notation(0), edge);
    assert_eq!(s.rank_notation(3), edge);
    assert_eq!(s.rank_notation(1), middle);
    assert_eq!(s.rank_notation(2), middle);
}

#[test]
fn dualpipe_holds_pp_plus_one_activations_on_every_rank() {
    for (pp, n) in [(4, 8), (8, 20), (6, 16)] {
        let r = run(ScheduleKind::DualPipe, pp, n, Costs::new(1.0, 2.0, 1.0, 3.0));
        assert_eq!(r.peak_activations, vec![pp + 1; pp], "PP={pp}");
        assert_eq!(r.param_copies, 2);
    }
}

#[test]
fn memory_columns_of_the_table() {
    let c = Costs::new(2.0, 4.0, 2.0, 5.0);
    // 1F1B: rank r holds PP-r, so PP at its peak.
    assert_eq!(run(ScheduleKind::OneFOneB, 4, 8, c).peak_activations, [4, 3, 2, 1]);
    // ZB1P: activations live until W, every rank reaches PP and none exceeds it.
    assert_eq!(run(ScheduleKind::Zb1p, 4, 8, c).peak_activations, [4, 4, 4, 4]);
    let v = run(ScheduleKind::DualPipeV, 8, 20, c);
    assert_eq!(v.peak_activations, [9, 9, 9, 9]);
    assert_eq!(v.param_copies, 2);
    assert_eq!(run(ScheduleKind::Zb1p, 4, 8, c).param_copies, 1);
}

#[test]
fn dualpipev_is_dualpipe_upper_half_on_half_the_devices() {
    let v = ScheduleKind::DualPipeV.generate(8, 20).unwrap();
    let d = ScheduleKind::DualPipe.generate(8, 40).unwrap();
    assert_eq!(v.layout.ranks(), 4);
    assert_eq!(v.programs[..], d.programs[..4]);
    let c = Costs::new(1.0, 2.0, 1.0, 3.0);
    let rv = simulate(&v, &c).unwrap();
    assert_eq!(rv.bubble, run(ScheduleKind::DualPipe, 8, 20, c).bubble);
    assert_eq!(rv.bubble, ScheduleKind::DualPipeV.formula_bubble(8, &c));
}

#[test]
fn latency_is_paid_per_hop_between_ranks() {
    // One micro-batch through two stages: F, send, F, B, send, B.
    let c = Costs::new(1.0, 2.0, 1.0, 3.0).with_latency(0.5);
    let r = run(ScheduleKind::OneFOneB, 2, 1, c);
    assert_eq!(r.makespan, 2.0 * 1.0 + 2.0 * 2.0 + 2.0 * 0.5);
    // DualPipeV turns at the bottom of the V without leaving the device: no latency there.
    let v = run(ScheduleKind::DualPipeV, 2, 2, c);
    let no_latency = run(ScheduleKind::DualPipeV, 2, 2, Costs { latency: 0.0, ..c });
    assert_eq!(v.makespan, no_latency.makespan);
}
