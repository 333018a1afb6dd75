//! The text and the figure the book and the CLI show.

use gpubook_sim::{Costs, PipelineArgs, ScheduleKind, compare, comparison_table, gantt_svg, run_report, simulate};

#[test]
fn cli_report() {
    let args = PipelineArgs {
        schedule: "dualpipe".parse().unwrap(),
        pp: 8,
        microbatches: 20,
        f: 2.0,
        b: 4.0,
        w: 1.0,
        fb: Some(5.0),
        latency: 0.0,
    };
    let text = run_report(&args).unwrap();
    println!("{text}");
    assert!(text.starts_with("DualPipe: PP = 8 stages on 8 ranks, N = 20 micro-batches"));
    assert!(text.contains("makespan          125\n"));
    assert!(text.contains("bubble            16 (max over ranks; the formula (PP/2-1)(F&B+B-3W) gives 18)"));
    assert!(text.contains("peak activations  9 "));
    assert!(text.contains("parameters        2 stage(s) per rank (2x)"));
    assert!(text.contains("\n   0       111        14                 9\n"));
}

#[test]
fn report_errors_are_typed() {
    let args = PipelineArgs { schedule: ScheduleKind::DualPipe, pp: 8, microbatches: 10, f: 1.0, b: 2.0, w: 1.0, fb: None, latency: 0.0 };
    let err = run_report(&args).unwrap_err();
    assert_eq!(err.to_string(), "DualPipe needs an even PP ≥ 2 and an even N ≥ 2·PP (got PP = 8, N = 10)");
    assert!("pipedream".parse::<ScheduleKind>().is_err());
    assert_eq!("DualPipe-V".parse::<ScheduleKind>().unwrap(), ScheduleKind::DualPipeV);
    assert_eq!("1F1B".parse::<ScheduleKind>().unwrap(), ScheduleKind::OneFOneB);
}

#[test]
fn comparison_for_the_book() {
    let c = Costs::new(2.0, 4.0, 2.0, 5.0);
    let rows = compare(4, 8, &c).unwrap();
    let summary: Vec<_> =
        rows.iter().map(|r| (r.schedule.name(), r.devices, r.bubble, r.makespan, r.param_copies, r.peak_activations)).collect();
    assert_eq!(
        summary,
        [("1F1B", 4, 18.0, 66.0, 1, 4), ("ZB1P", 4, 6.0, 54.0, 1, 4), ("DualPipe", 4, 3.0, 48.0, 2, 5), ("DualPipeV", 2, 3.0, 88.0, 2, 5),]
    );
    let table = comparison_table(4, 8, &c).unwrap();
    println!("{table}");
    assert!(table.contains("| DualPipe | 4 | 4 | 8 | (PP/2-1)(F&B+B-3W) | 3 | 3 | 48 | 2x | 5 |"));
}

#[test]
fn gantt_figure() {
    let r = simulate(&ScheduleKind::DualPipe.generate(4, 8).unwrap(), &Costs::new(2.0, 4.0, 2.0, 5.0)).unwrap();
    let svg = gantt_svg(&r, "DualPipe, PP = 4, N = 8");
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("DualPipe, PP = 4, N = 8"));
    assert!(svg.contains("rank 3") && svg.contains("bubble 3"));
    let ops: usize = r.spans.iter().map(Vec::len).sum();
    assert!(svg.matches("<rect").count() > ops);
    let dir = std::env::temp_dir().join("gpubook-sim");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("dualpipe_pp4_n8.svg"), svg).unwrap();
}
