//! Writes the chapter's Gantt charts and prints its table:
//! `cargo run -p gpubook-sim --example pipeline_figures -- [OUT_DIR]` (default: the temp dir).

use gpubook_sim::{Costs, ScheduleKind, comparison_table, gantt_svg, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map(std::path::PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join("gpubook-sim"));
    std::fs::create_dir_all(&out)?;
    let figures = [
        (ScheduleKind::OneFOneB, 4, 8, Costs::new(2.0, 4.0, 2.0, 5.0)),
        (ScheduleKind::Zb1p, 4, 8, Costs::new(2.0, 4.0, 2.0, 5.0)),
        (ScheduleKind::DualPipe, 4, 8, Costs::new(2.0, 4.0, 2.0, 5.0)),
        (ScheduleKind::DualPipe, 8, 20, Costs::new(1.0, 2.0, 1.0, 3.0)),
        (ScheduleKind::DualPipeV, 8, 20, Costs::new(1.0, 2.0, 1.0, 3.0)),
    ];
    for (kind, pp, n, costs) in figures {
        let result = simulate(&kind.generate(pp, n)?, &costs)?;
        let title = format!("{kind}, PP = {pp}, N = {n}: makespan {}, bubble {}", result.makespan, result.bubble);
        let path = out.join(format!("{}_pp{pp}_n{n}.svg", kind.name().to_lowercase()));
        std::fs::write(&path, gantt_svg(&result, &title))?;
        println!("wrote {}", path.display());
    }
    print!("{}", comparison_table(4, 8, &Costs::new(2.0, 4.0, 2.0, 5.0))?);
    Ok(())
}
