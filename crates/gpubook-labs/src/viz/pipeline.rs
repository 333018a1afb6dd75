//! Pipeline-parallel schedules as Gantt charts: `gpubook::sim` simulates, its `gantt_svg` draws;
//! this gives the figure the same [`Svg`](super::Svg) type as the rest.

use gpubook::sim::{Costs, ScheduleKind, SimError, gantt_svg, simulate};

/// Simulates `kind` on `pp` stages with `microbatches` micro-batches and draws every rank's work.
pub fn pipeline_svg(kind: ScheduleKind, pp: usize, microbatches: usize, costs: &Costs) -> Result<super::Svg, SimError> {
    let result = simulate(&kind.generate(pp, microbatches)?, costs)?;
    let title = format!("{} with PP = {pp}, {microbatches} micro-batches", kind.name());
    Ok(super::Svg(gantt_svg(&result, &title)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dualpipe_chart_has_a_title() {
        let svg = pipeline_svg(ScheduleKind::DualPipe, 4, 8, &Costs::new(2.0, 4.0, 2.0, 5.0)).unwrap();
        assert!(svg.as_str().contains("PP = 4, 8 micro-batches"));
    }
}
