//! Broken schedules are reported with what waits for what, never simulated.

use gpubook_sim::{Costs, Op, Part, ScheduleKind, SimError, Slot, StageRef, Task, Wait, simulate};

fn costs() -> Costs {
    Costs::new(2.0, 4.0, 2.0, 5.0)
}

fn deadlock(err: SimError) -> Vec<Wait> {
    match err {
        SimError::Deadlock { waits, .. } => waits,
        other => panic!("expected a deadlock, got {other}"),
    }
}

#[test]
fn backward_before_its_forward() {
    let mut s = ScheduleKind::OneFOneB.generate(4, 8).unwrap();
    // The last stage runs `F B F B ...`; plant `B F`.
    s.programs[3].swap(0, 1);
    let err = simulate(&s, &costs()).unwrap_err();
    let text = err.to_string();
    let waits = deadlock(err);
    let stuck = waits.iter().find(|w| w.rank == 3).expect("rank 3 is stuck");
    assert_eq!((stuck.index, stuck.op), (0, Op::B(Slot::new(0, 0))));
    assert_eq!(stuck.needs.len(), 1);
    assert_eq!(stuck.needs[0].scheduled_at, Some((3, 1)));
    assert!(text.contains("rank 3 op #0 `B0` (micro-batch 0) waits for the forward of micro-batch 0 at stage 3"));
    assert!(text.contains("only runs later, at op #1"), "{text}");
}

#[test]
fn missing_forward_blocks_the_next_stage() {
    let mut s = ScheduleKind::DualPipe.generate(4, 8).unwrap();
    // Rank 1's first op is the forward of direction 0, stage 1, micro-batch 0.
    let dropped = s.programs[1].remove(0);
    assert_eq!(dropped, Op::F(Slot::new(0, 0)));
    let err = simulate(&s, &costs()).unwrap_err();
    assert!(err.to_string().contains("which no rank runs (a missing op)"), "{err}");
    let waits = deadlock(err);
    let missing = Task { part: Part::Forward, at: StageRef { pipe: 0, stage: 1 }, mb: 0 };
    // Rank 2 waits for it, with nowhere to get it from.
    assert!(waits.iter().any(|w| { w.rank == 2 && w.needs.iter().any(|n| n.task == missing && n.scheduled_at.is_none()) }));
}

#[test]
fn duplicated_op() {
    let mut s = ScheduleKind::Zb1p.generate(4, 8).unwrap();
    let op = s.programs[2][0];
    s.programs[2].push(op);
    let err = simulate(&s, &costs()).unwrap_err();
    assert!(matches!(err, SimError::Duplicate { first: (2, 0), .. }), "{err}");
}

#[test]
fn weight_gradient_nobody_waits_for() {
    let mut s = ScheduleKind::Zb1p.generate(4, 8).unwrap();
    let last = s.programs[0].pop().unwrap();
    assert_eq!(last, Op::W(Slot::new(0, 7)));
    let err = simulate(&s, &costs()).unwrap_err();
    assert_eq!(err, SimError::Missing { task: Task { part: Part::WeightGrad, at: StageRef { pipe: 0, stage: 0 }, mb: 7 }, rank: 0 });
}

#[test]
fn weight_gradient_before_its_input_gradient() {
    let mut s = ScheduleKind::DualPipe.generate(4, 8).unwrap();
    // Rank 0: F0 F0 F0 F1 B1z W ... ; swap B1z and its W.
    s.programs[0].swap(4, 5);
    let waits = deadlock(simulate(&s, &costs()).unwrap_err());
    let stuck = waits.iter().find(|w| w.rank == 0).unwrap();
    assert_eq!(stuck.op, Op::W(Slot::new(1, 0)));
    assert_eq!(stuck.needs[0].scheduled_at, Some((0, 5)));
}

#[test]
fn op_outside_the_schedule() {
    let mut s = ScheduleKind::OneFOneB.generate(2, 2).unwrap();
    s.programs[0][0] = Op::F(Slot::new(0, 5));
    let err = simulate(&s, &costs()).unwrap_err();
    assert!(matches!(err, SimError::BadOp { rank: 0, index: 0, .. }), "{err}");
}

#[test]
fn shapes_and_costs_are_checked() {
    let shape = |kind: ScheduleKind, pp, n| matches!(kind.generate(pp, n), Err(SimError::Shape { .. }));
    assert!(shape(ScheduleKind::DualPipe, 3, 12)); // odd PP
    assert!(shape(ScheduleKind::DualPipe, 4, 7)); // odd N
    assert!(shape(ScheduleKind::DualPipe, 4, 6)); // N < 2·PP
    assert!(shape(ScheduleKind::DualPipeV, 8, 6)); // N < 2·devices
    assert!(ScheduleKind::DualPipeV.generate(8, 8).is_ok());
    assert!(shape(ScheduleKind::OneFOneB, 4, 0));

    let s = ScheduleKind::OneFOneB.generate(2, 2).unwrap();
    let bad = Costs::new(1.0, 1.0, 2.0, 2.0); // W > B
    assert!(matches!(simulate(&s, &bad), Err(SimError::Costs(_))));
    let nan = Costs::new(f64::NAN, 1.0, 0.5, 2.0);
    assert!(matches!(simulate(&s, &nan), Err(SimError::Costs(_))));
}
