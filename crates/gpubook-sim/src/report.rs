//! Text for people: the `gpubook pipeline` report and the book's comparison table.

use std::fmt::Write as _;

use crate::costs::Costs;
use crate::error::SimError;
use crate::schedule::ScheduleKind;
use crate::sim::{SimResult, simulate};

/// What `gpubook pipeline` takes on its command line.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineArgs {
    pub schedule: ScheduleKind,
    /// Pipeline depth in stages (DualPipeV runs them on `pp / 2` devices).
    pub pp: usize,
    /// Micro-batches N (DualPipe feeds N/2 from each end).
    pub microbatches: usize,
    pub f: f64,
    /// The full backward, W included.
    pub b: f64,
    pub w: f64,
    /// The overlapped F&B pair; `None` means `f + b` (overlap gains nothing).
    pub fb: Option<f64>,
    pub latency: f64,
}

impl PipelineArgs {
    pub fn costs(&self) -> Costs {
        Costs::new(self.f, self.b, self.w, self.fb.unwrap_or(self.f + self.b)).with_latency(self.latency)
    }

    /// Generates and simulates the schedule.
    pub fn simulate(&self) -> Result<SimResult, SimError> {
        let schedule = self.schedule.generate(self.pp, self.microbatches)?;
        simulate(&schedule, &self.costs())
    }
}

/// Simulates `args` and returns the report `gpubook pipeline` prints.
pub fn run_report(args: &PipelineArgs) -> Result<String, SimError> {
    let r = args.simulate()?;
    Ok(report(&r))
}

/// The report of a finished simulation.
pub fn report(r: &SimResult) -> String {
    let s = &r.schedule;
    let c = &r.costs;
    let kind = s.kind;
    let mut out = String::new();
    let per_direction = if s.layout.pipes() > 1 { format!(" ({} from each end)", s.layout.microbatches()) } else { String::new() };
    let _ = writeln!(
        out,
        "{kind}: PP = {} stages on {} ranks, N = {} micro-batches{per_direction}",
        s.pp(),
        s.layout.ranks(),
        s.microbatches(),
    );
    let _ = writeln!(
        out,
        "costs: F = {}, B = {} (W = {} of it), F&B = {}, latency = {}",
        num(c.f),
        num(c.b),
        num(c.w),
        num(c.fb),
        num(c.latency)
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "makespan          {}", num(r.makespan));
    let _ = writeln!(
        out,
        "bubble            {} (max over ranks; the formula {} gives {})",
        num(r.bubble),
        kind.bubble_formula(),
        num(kind.formula_bubble(s.pp(), c))
    );
    let _ = writeln!(out, "peak activations  {} (max over ranks, in micro-batches of one stage)", r.max_activations());
    let _ = writeln!(out, "parameters        {} stage(s) per rank ({}x)", r.param_copies, r.param_copies);
    let _ = writeln!(out);
    let _ = writeln!(out, "rank      busy    bubble  peak activations");
    for rank in 0..r.spans.len() {
        let _ = writeln!(out, "{rank:>4}  {:>8}  {:>8}  {:>16}", num(r.busy[rank]), num(r.bubbles[rank]), r.peak_activations[rank]);
    }
    out
}

/// One row of the comparison table.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub schedule: ScheduleKind,
    pub devices: usize,
    pub pp: usize,
    pub microbatches: usize,
    pub formula: &'static str,
    pub formula_bubble: f64,
    pub bubble: f64,
    pub makespan: f64,
    pub param_copies: usize,
    pub peak_activations: usize,
}

/// All four schedules on the same pipeline and costs.
pub fn compare(pp: usize, microbatches: usize, costs: &Costs) -> Result<Vec<Comparison>, SimError> {
    ScheduleKind::ALL
        .iter()
        .map(|&kind| {
            let r = simulate(&kind.generate(pp, microbatches)?, costs)?;
            Ok(Comparison {
                schedule: kind,
                devices: r.schedule.layout.ranks(),
                pp,
                microbatches,
                formula: kind.bubble_formula(),
                formula_bubble: kind.formula_bubble(pp, costs),
                bubble: r.bubble,
                makespan: r.makespan,
                param_copies: r.param_copies,
                peak_activations: r.max_activations(),
            })
        })
        .collect()
}

/// [`compare`] as a Markdown table, for the book.
pub fn comparison_table(pp: usize, microbatches: usize, costs: &Costs) -> Result<String, SimError> {
    let rows = compare(pp, microbatches, costs)?;
    let mut out = String::from(
        "| schedule | devices | PP | N | bubble formula | formula value | simulated bubble | makespan | parameters per device | peak activations |\n\
         |---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {}x | {} |",
            row.schedule,
            row.devices,
            row.pp,
            row.microbatches,
            row.formula,
            num(row.formula_bubble),
            num(row.bubble),
            num(row.makespan),
            row.param_copies,
            row.peak_activations
        );
    }
    Ok(out)
}

/// A time as people write it: `48`, `2.5`, never `2.5000000001` or `-0`.
pub fn num(x: f64) -> String {
    let s = format!("{:.3}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}
