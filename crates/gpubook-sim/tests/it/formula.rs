//! Where the report's bubble formulas stop describing the schedules they summarise.

use gpubook_sim::{Costs, ScheduleKind, simulate};

/// DualPipe's formula (PP/2-1)(F&B+B-3W) promises a bubble-free pipeline for PP=8, N=20 and
/// F=1, B=3, W=2, F&B=3: 3·(3+3-6) = 0. The simulation measures 3.
///
/// The formula matches the simulation when F = B-W and W ≤ F (the last test); here F = B-W
/// holds but W = 2F. It takes 3W off per unit of depth for the weight gradients it counts on to
/// fill bubbles, and nothing in it stops the result from reaching 0, or going negative
/// (F=1, B=4, W=3, F&B=4 gives -3). But no schedule beats its start-up: a middle rank
/// (h = PP/2-1) can run nothing before micro-batch 0 has crossed the PP/2-1 stages before it,
/// so its bubble is at least (PP/2-1)·F = 3, whatever the order of its ops. The simulation
/// reaches exactly that bound: the middle ranks idle 3 at the start and never again, the other
/// ranks less. ZB1P's formula (PP-1)(F+B-2W) meets the same wall, (PP-1)·F on the last
/// stage, as soon as W > B-W.
#[test]
fn dualpipe_formula_vs_simulation() {
    let (pp, n) = (8, 20);
    let c = Costs::new(1.0, 3.0, 2.0, 3.0);
    let r = simulate(&ScheduleKind::DualPipe.generate(pp, n).unwrap(), &c).unwrap();
    assert_eq!(ScheduleKind::DualPipe.formula_bubble(pp, &c), 0.0);
    assert_eq!(r.bubble, 3.0);
    assert_eq!(r.bubbles, [1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0]);

    // The middle ranks' bubble is all start-up: (PP/2-1)·F before their first op.
    let middle = pp / 2 - 1;
    let lower_bound = middle as f64 * c.f;
    assert_eq!(r.spans[middle][0].start, lower_bound);
    assert_eq!(r.bubbles[middle], lower_bound);

    // Negative predictions are the same story, further out.
    let c = Costs::new(1.0, 4.0, 3.0, 4.0);
    let r = simulate(&ScheduleKind::DualPipe.generate(pp, n).unwrap(), &c).unwrap();
    assert_eq!(ScheduleKind::DualPipe.formula_bubble(pp, &c), -3.0);
    assert_eq!(r.bubble, 3.0);

    // ZB1P: the formula says 0, the last stage idles (PP-1)·F = 7 before its first forward.
    let c = Costs::new(1.0, 3.0, 2.0, 3.0);
    let z = simulate(&ScheduleKind::Zb1p.generate(pp, n).unwrap(), &c).unwrap();
    assert_eq!((ScheduleKind::Zb1p.formula_bubble(pp, &c), z.bubble), (0.0, 7.0));
}

/// The formula can be off the other way too: with F=2, B=4, W=1, F&B=5 (F ≠ B-W) it predicts
/// 18 for PP=8, N=20 and the simulation needs only 16; the ZB1P formula still holds there.
#[test]
fn dualpipe_formula_is_pessimistic_when_f_differs_from_b_minus_w() {
    let c = Costs::new(2.0, 4.0, 1.0, 5.0);
    let r = simulate(&ScheduleKind::DualPipe.generate(8, 20).unwrap(), &c).unwrap();
    assert_eq!((ScheduleKind::DualPipe.formula_bubble(8, &c), r.bubble), (18.0, 16.0));
    let z = simulate(&ScheduleKind::Zb1p.generate(8, 20).unwrap(), &c).unwrap();
    assert_eq!(z.bubble, ScheduleKind::Zb1p.formula_bubble(8, &c));
}

/// Under the conditions the formulas assume, all four agree with the simulation.
#[test]
fn formulas_hold_when_f_is_b_minus_w_and_w_at_most_f() {
    for (f, b, w, fb) in [(2.0, 4.0, 2.0, 5.0), (1.0, 2.0, 1.0, 3.0), (3.0, 4.0, 1.0, 6.0)] {
        let c = Costs::new(f, b, w, fb);
        for kind in ScheduleKind::ALL {
            for (pp, n) in [(4, 8), (8, 20), (6, 14)] {
                let r = simulate(&kind.generate(pp, n).unwrap(), &c).unwrap();
                assert_eq!(r.bubble, kind.formula_bubble(pp, &c), "{kind} PP={pp} N={n} {c:?}");
            }
        }
    }
}
