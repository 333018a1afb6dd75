//! What each `{{#figure KIND ...}}` and `{{#run KIND ...}}` produces. Figures that need a device
//! run through `gpubook::gpu` (a GPU when there is one, else the emulator); the rest are computed.
//!
//! | marker | makes |
//! |---|---|
//! | `{{#figure launch n=1000 block=256 kernel=vector_add}}` (or `rows= cols= block=16x16`) | which thread covers which element, computed from the launch configuration |
//! | `{{#figure thread-map vector_add n=1000 block=256}}` (`grid_stride`, `matrix_2d`) | the same, observed: an instrumented kernel records who wrote each element |
//! | `{{#figure bandwidth from=4KiB to=64MiB}}` | copy bandwidth against size, from the trace |
//! | `{{#figure timeline streams=3 chunks=6 n=1048576}}` | the streams of a chunked copy/compute/copy run |
//! | `{{#figure pipeline dualpipe pp=4 n=8 f=1 b=2 w=1}}` | a simulated pipeline schedule |
//! | `{{#run device}}` | the device the book was built on |
//! | `{{#run trace n=1000 block=256}}` | the trace of a vector add |
//! | `{{#run pipeline dualpipe pp=4 n=8}}`, `{{#run pipeline-compare pp=8 n=20}}` | the simulator's report and comparison table |
//! | `{{#figure chunk-pair dualpipe}}` (`one-stream`, `chunk-by-chunk`) | one DualPipe chunk pair's two streams, issued in that plan's order |
//! | `{{#run overlap}}` | `gpubook overlap`'s table: how much communication each plan hides |
//! | `{{#figure streams ping-pong chunks=8 elems=262144}}` (`serial`, `three-streams`) | a chunked copy/compute/copy job in one of chapter 7-8's designs |
//! | `{{#run streams-bench chunks=8 elems=262144}}` | `gpubook streams-bench`'s tables: designs against their bound, pinned against pageable |
//! | `moe-routing`, `two-hop`, `moe-timeline` figures; `moe`, `moe-limits`, `channel-sweep`, `sm-share` runs | chapters 12-14, see [`super::ep_outputs`] |
//! | `{{#figure sectors}}` | sectors per warp request against the stride between lanes, counted by the emulator |
//! | `{{#run bank-conflicts}}` | passes through the banks against a shared tile's padding, counted by the emulator |
//! | `{{#figure occupancy registers=32,64,128 shared=0}}` | an H200's occupancy against block size, computed from its limits |
//! | `{{#run perf-bench sections=coalescing,banks}}` | `gpubook perf-bench`'s table (those sections), on the book's device |
//! | `{{#figure roofline}}`, `{{#run roofline}}` | the roofline and the book's kernels under it, on the book's device |
//! | `{{#run scan-work}}` | three block scans' barriers and shared-memory accesses, counted by the emulator |
//! | `{{#figure diagram NAME}}` | a drawn diagram (tiled matmul walk, reduction tree, banks, ...; see [`gpubook_labs::viz::diagram`]) |
//!
//! Any device marker may add `recorded=NAME`: the book then shows the output recorded on a GPU in
//! `book/recorded/NAME.json` instead of running it ([`super::recorded`]).

use super::ep_outputs::{self, Made};
use super::markers::{Args, Marker};
use anyhow::{Context, anyhow, bail};
use gpubook::gpu::{CopyDir, Gpu, LaunchConfig, Source};
use gpubook::sim::{Costs, PipelineArgs, ScheduleKind, comparison_table, run_report};
use gpubook_labs::viz::{self, BandwidthPoint, Pattern, ThreadMap};
use gpubook_labs::{chunk_pair, counted, perf, roofline};
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;

/// A marker's result.
pub struct Output {
    pub body: Body,
    /// One sentence on what it shows.
    pub caption: String,
    /// `None`: computed without a device; `Some(backend)`: run on that backend.
    pub ran_on: Option<String>,
    /// The command line that prints or draws the same, where there is one.
    pub command: Option<String>,
}

/// What an output shows. Figures keep their data, not their drawing, so that an output recorded
/// on a GPU is drawn by the book's figure code of today.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// A finished drawing (diagrams, thread maps, pipelines; old recordings).
    Svg(String),
    Timeline(viz::Timeline),
    Bandwidth {
        title: String,
        points: Vec<Copy>,
    },
    /// Preformatted text, shown as a code block.
    Text(String),
    /// Markdown (tables with a few lines around them), shown as is.
    Markdown(String),
}

/// A timed copy of the bandwidth figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Copy {
    /// `host-to-device` or `device-to-host`.
    pub direction: String,
    pub pinned: bool,
    pub bytes: usize,
    pub micros: f64,
}

impl Body {
    /// The drawing, for the bodies that are figures.
    pub fn svg(&self) -> Option<String> {
        match self {
            Body::Svg(s) => Some(s.clone()),
            Body::Timeline(t) => Some(t.svg().0),
            Body::Bandwidth { title, points } => {
                let points: Vec<BandwidthPoint> = points
                    .iter()
                    .map(|c| BandwidthPoint {
                        dir: if c.direction == "device-to-host" { CopyDir::DeviceToHost } else { CopyDir::HostToDevice },
                        pinned: c.pinned,
                        bytes: c.bytes,
                        micros: c.micros,
                    })
                    .collect();
                Some(viz::bandwidth_svg(&points, title).0)
            }
            Body::Text(_) | Body::Markdown(_) => None,
        }
    }
}

/// The device markers run on, opened on first use and shared by the build's markers.
#[derive(Default)]
pub struct Lab {
    gpu: OnceCell<Result<Gpu, String>>,
}

impl Lab {
    pub fn gpu(&self) -> anyhow::Result<&Gpu> {
        self.gpu
            .get_or_init(|| Gpu::new().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| anyhow!("this needs a device, and none is usable: {e}"))
    }
}

/// Whether the marker runs on a device (so its cache entry depends on which one).
pub fn needs_device(m: &Marker) -> bool {
    matches!(
        (m.name.as_str(), m.args.positional(0)),
        ("figure", Some("thread-map" | "bandwidth" | "timeline" | "chunk-pair" | "streams" | "moe-timeline" | "roofline"))
            | (
                "run",
                Some("device" | "trace" | "overlap" | "streams-bench" | "moe" | "perf-bench" | "roofline" | "channel-sweep" | "sm-share")
            )
    )
}

/// The most cells a thread map draws: beyond this it is a texture, not a picture.
const MAX_CELLS: usize = 16_384;

pub fn produce(m: &Marker, lab: &Lab) -> anyhow::Result<Output> {
    let a = &m.args;
    let kind = a.positional(0).unwrap_or("");
    match (m.name.as_str(), kind) {
        ("figure", "launch") => launch(a),
        ("figure", "thread-map") => thread_map(a, lab),
        ("figure", "bandwidth") => bandwidth(a, lab),
        ("figure", "timeline") => timeline(a, lab),
        ("figure", "pipeline") => pipeline_figure(a),
        ("run", "device") => device(a, lab),
        ("run", "trace") => trace(a, lab),
        ("run", "pipeline") => pipeline_report(a),
        ("run", "pipeline-compare") => pipeline_compare(a),
        ("figure", "chunk-pair") => chunk_pair_figure(a, lab),
        ("run", "overlap") => overlap_table(a, lab),
        ("figure", "streams") => streams_figure(a, lab),
        ("run", "streams-bench") => streams_bench(a, lab),
        ("figure", "diagram") => diagram(a),
        ("figure", "moe-routing") => computed(ep_outputs::routing_figure(a)?),
        ("figure", "two-hop") => computed(ep_outputs::two_hop_figure(a)?),
        ("figure", "moe-timeline") => ran(lab, |gpu| ep_outputs::moe_timeline(a, gpu)),
        ("run", "moe") => ran(lab, |gpu| ep_outputs::moe_report(a, gpu)),
        ("run", "moe-limits") => computed(ep_outputs::limits_table(a)?),
        ("run", "channel-sweep") => ran(lab, |gpu| ep_outputs::channel_sweep(a, gpu)),
        ("run", "sm-share") => ran(lab, |gpu| ep_outputs::sm_share(a, gpu)),
        ("figure", "sectors") => sectors(a),
        ("run", "bank-conflicts") => bank_conflicts(a),
        ("figure", "occupancy") => occupancy(a),
        ("run", "perf-bench") => perf_bench(a, lab),
        ("figure", "roofline") => roofline_figure(a, lab),
        ("run", "roofline") => roofline_table(a, lab),
        ("run", "scan-work") => scan_work(a),
        ("figure", _) => bail!(
            "unknown figure `{kind}` (launch, thread-map, bandwidth, timeline, pipeline, chunk-pair, streams, diagram, \
             moe-routing, two-hop, moe-timeline, sectors, occupancy, roofline)"
        ),
        _ => bail!(
            "unknown run `{kind}` (device, trace, pipeline, pipeline-compare, overlap, streams-bench, moe, moe-limits, channel-sweep, sm-share, \
             bank-conflicts, perf-bench, roofline, scan-work)"
        ),
    }
}

/// A launch over data: (rows, cols) of the data, then grid and block (x, y).
type Launch = ((usize, usize), (u32, u32), (u32, u32));

/// `n=` for an array, or `rows=`/`cols=` for a matrix, with `block=` and an optional `grid=`
/// (by default just enough blocks to cover the data).
fn shape_and_launch(a: &Args, two_d: bool) -> anyhow::Result<Launch> {
    let shape: (usize, usize) = if two_d || a.raw("rows").is_some() { (a.need("rows")?, a.need("cols")?) } else { (1, a.need("n")?) };
    let block = a.dims("block", if shape.0 > 1 { (16, 16) } else { (256, 1) })?;
    if block.0 == 0 || block.1 == 0 {
        bail!("a block needs at least one thread");
    }
    let cover = ((shape.1 as u32).div_ceil(block.0), (shape.0 as u32).div_ceil(block.1));
    let grid = a.dims("grid", cover)?;
    let cells = shape.0.max((grid.1 * block.1) as usize) * shape.1.max((grid.0 * block.0) as usize);
    if cells > MAX_CELLS {
        bail!("{cells} cells are too many to draw (at most {MAX_CELLS}); use a smaller size");
    }
    Ok((shape, grid, block))
}

fn launch(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &["n", "rows", "cols", "block", "grid", "kernel"])?;
    let (shape, grid, block) = shape_and_launch(a, false)?;
    let mut map = ThreadMap::predict(shape, grid, block);
    map.kernel = a.get("kernel", "kernel".to_string())?;
    let caption = format!("Which block and thread each element of {} falls to", map.launch_text());
    Ok(Output { body: Body::Svg(viz::thread_map_svg(&map).0), caption, ran_on: None, command: None })
}

fn thread_map(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(2, &["n", "rows", "cols", "block", "grid"])?;
    let name = a.positional(1).ok_or_else(|| anyhow!("names no pattern (vector_add, grid_stride, matrix_2d)"))?;
    let pattern = Pattern::from_name(name).ok_or_else(|| anyhow!("no pattern `{name}` (vector_add, grid_stride, matrix_2d)"))?;
    let (shape, grid, block) = shape_and_launch(a, pattern.is_2d())?;
    let gpu = lab.gpu()?;
    let map = ThreadMap::record(gpu, pattern, shape, grid, block)?;
    let caption = format!("Who wrote each element when {} ran", map.launch_text());
    Ok(Output { body: Body::Svg(viz::thread_map_svg(&map).0), caption, ran_on: Some(viz::backend_label(gpu)), command: None })
}

fn bandwidth(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["from", "to", "reps"])?;
    let (from, to) = (a.bytes("from", 4 << 10)?, a.bytes("to", 64 << 20)?);
    if from == 0 || to < from {
        bail!("needs 0 < from <= to");
    }
    let sizes: Vec<usize> = std::iter::successors(Some(from), |s| s.checked_mul(4)).take_while(|s| *s <= to).collect();
    let gpu = lab.gpu()?;
    let points = viz::measure_bandwidth(gpu, &sizes, a.get("reps", 3)?)?;
    let title = format!("Copy bandwidth on {}", viz::backend_label(gpu));
    let caption = "Copy bandwidth against copy size, each way, from pageable and from pinned host memory; \
                   each copy timed on its own, from its issue to its end, the fastest of its repetitions"
        .to_string();
    let points = points
        .iter()
        .map(|p| Copy {
            direction: if p.dir == CopyDir::DeviceToHost { "device-to-host" } else { "host-to-device" }.into(),
            pinned: p.pinned,
            bytes: p.bytes,
            micros: p.micros,
        })
        .collect();
    Ok(Output { body: Body::Bandwidth { title, points }, caption, ran_on: Some(viz::backend_label(gpu)), command: None })
}

fn timeline(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["streams", "chunks", "n"])?;
    let (streams, chunks, n) = (a.get("streams", 3usize)?, a.get("chunks", 6usize)?, a.get("n", 1usize << 20)?);
    let gpu = lab.gpu()?;
    let trace = viz::overlap_demo(gpu, streams, chunks, n)?;
    let title = format!("Vector add of {n} floats in {chunks} chunks on {streams} stream{}", if streams == 1 { "" } else { "s" });
    let caption = format!("Each chunk's copies and kernel on its stream over time; {chunks} chunks round-robin over {streams} streams");
    let body = Body::Timeline(viz::Timeline::from_trace(&trace, &title, &viz::Labels::default()));
    Ok(Output { body, caption, ran_on: Some(viz::backend_label(gpu)), command: None })
}

fn pipeline_args(a: &Args) -> anyhow::Result<PipelineArgs> {
    a.only(2, &["pp", "n", "f", "b", "w", "fb", "latency"])?;
    let schedule: ScheduleKind = a.positional(1).unwrap_or("dualpipe").parse()?;
    Ok(PipelineArgs {
        schedule,
        pp: a.get("pp", 4)?,
        microbatches: a.get("n", 8)?,
        f: a.get("f", 1.0)?,
        b: a.get("b", 2.0)?,
        w: a.get("w", 1.0)?,
        fb: a.raw("fb").map(str::parse).transpose().context("`fb=`")?,
        latency: a.get("latency", 0.0)?,
    })
}

fn pipeline_figure(a: &Args) -> anyhow::Result<Output> {
    let p = pipeline_args(a)?;
    let svg = viz::pipeline_svg(p.schedule, p.pp, p.microbatches, &p.costs())?;
    let caption = format!(
        "{} on {} pipeline stages with {} micro-batches (F = {}, B = {}, W = {}{}), simulated by gpubook::sim",
        p.schedule.name(),
        p.pp,
        p.microbatches,
        p.f,
        p.b,
        p.w,
        p.fb.map(|fb| format!(", F&B = {fb}")).unwrap_or_default()
    );
    Ok(Output { body: Body::Svg(svg.0), caption, ran_on: None, command: Some(pipeline_command(&p) + " --svg FILE.svg") })
}

/// The `gpubook pipeline` command line for these settings, every cost given.
fn pipeline_command(p: &PipelineArgs) -> String {
    let schedule = p.schedule.to_string().to_ascii_lowercase();
    let mut c = format!(
        "gpubook pipeline --schedule {schedule} --pp {} --microbatches {} --f {} --b {} --w {}",
        p.pp, p.microbatches, p.f, p.b, p.w
    );
    if let Some(fb) = p.fb {
        c += &format!(" --fb {fb}");
    }
    if p.latency != 0.0 {
        c += &format!(" --latency {}", p.latency);
    }
    c
}

fn pipeline_report(a: &Args) -> anyhow::Result<Output> {
    let p = pipeline_args(a)?;
    let command = pipeline_command(&p);
    let caption = format!("`{command}`");
    Ok(Output { body: Body::Text(run_report(&p)?), caption, ran_on: None, command: None })
}

fn pipeline_compare(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &["pp", "n", "f", "b", "w", "fb"])?;
    let (f, b, w) = (a.get("f", 1.0)?, a.get("b", 2.0)?, a.get("w", 1.0)?);
    let costs = Costs::new(f, b, w, a.get("fb", f + b)?);
    let (pp, n) = (a.get("pp", 8)?, a.get("n", 20)?);
    let fb = a.get("fb", f + b)?;
    let caption = format!(
        "All four schedules with PP = {pp} and {n} micro-batches (F = {f}, B = {b}, W = {w}, F&B = {fb}), simulated by gpubook::sim"
    );
    Ok(Output { body: Body::Markdown(comparison_table(pp, n, &costs)?), caption, ran_on: None, command: None })
}

fn device(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &[])?;
    let gpu = lab.gpu()?;
    // Without the `detail` line: it names paths on the machine that built the book.
    let info = gpu.info().to_string();
    let info: Vec<&str> = info.lines().filter(|l| !l.starts_with("detail")).collect();
    let body = Body::Text(info.join("\n"));
    Ok(Output {
        body,
        caption: "`Gpu::new()?.info()`".into(),
        ran_on: Some(viz::backend_label(gpu)),
        command: Some("gpubook doctor".into()),
    })
}

/// A vector add, and every operation it put in the trace with its time.
fn trace(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["n", "block"])?;
    let (n, block) = (a.get("n", 1000usize)?, a.get("block", 256u32)?);
    let gpu = lab.gpu()?;
    let first = gpu.trace()?.ops.len();
    let stream = gpu.default_stream();
    let module = gpu.load_module(Source::library("bench/vector_add.cu"))?;
    let f = module.load_function("vector_add_naive")?;
    {
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a_d = stream.clone_htod(&x)?;
        let b_d = stream.clone_htod(&x)?;
        let mut c_d = stream.alloc_zeros::<f32>(n)?;
        let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let n_i = n as i32;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&n_i);
        // SAFETY: a_d, b_d and c_d hold n floats and the kernel's i < n guard keeps the
        // covering grid inside them.
        unsafe { launch.launch(cfg) }?;
        let c = stream.clone_dtoh(&c_d)?;
        if c.iter().enumerate().any(|(i, &v)| v != 2.0 * i as f32) {
            bail!("the vector add computed a wrong sum");
        }
    }
    gpu.synchronize()?;
    let ops = &gpu.trace()?.ops[first..];
    let t0 = ops.iter().map(|o| o.start_us).fold(f64::INFINITY, f64::min);
    let mut text = format!("{:>4}  {:>6}  {:>10}  {:>9}  {}\n", "#", "stream", "start (µs)", "took (µs)", "operation");
    for (i, o) in ops.iter().enumerate() {
        text += &format!("{:>4}  {:>6}  {:>10.1}  {:>9.1}  {}\n", i, o.stream, o.start_us - t0, o.duration_us(), o.kind.short());
    }
    let caption = format!("`gpu.trace()` after a vector add of {n} floats with blocks of {block}");
    Ok(Output { body: Body::Text(text), caption, ran_on: Some(viz::backend_label(gpu)), command: None })
}

/// The chunk pair's settings for this device, with `n=`, `rounds=` and `blocks-per-sm=` (0: one
/// thread per element) as overrides.
fn chunk_pair_setup(a: &Args, gpu: &Gpu) -> anyhow::Result<(usize, chunk_pair::PairConfig)> {
    let mut config = chunk_pair::PairConfig::for_device(gpu);
    config.rounds = a.get("rounds", config.rounds)?;
    if let Some(per_sm) = a.raw("blocks-per-sm") {
        let per_sm: u32 = per_sm.parse().context("`blocks-per-sm=`")?;
        config.blocks_per_sm = (per_sm > 0).then_some(per_sm);
    }
    Ok((a.get("n", chunk_pair::default_len(gpu))?, config))
}

fn chunk_pair_figure(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(2, &["n", "rounds", "blocks-per-sm"])?;
    let key = a.positional(1).unwrap_or("dualpipe");
    let plan = chunk_pair::Plan::from_key(key).ok_or_else(|| anyhow!("no plan `{key}` (one-stream, chunk-by-chunk, dualpipe)"))?;
    let gpu = lab.gpu()?;
    let (n, config) = chunk_pair_setup(a, gpu)?;
    let reps = chunk_pair::default_reps(gpu);
    let alone = chunk_pair::measure(gpu, chunk_pair::Plan::OneStream, n, config, reps)?.overlap;
    let run = chunk_pair::measure(gpu, plan, n, config, reps)?;
    let title = format!("{}: {:.0}% of the communication hidden", plan, 100.0 * run.overlap.hidden_against(&alone));
    let caption = format!(
        "The chunk pair's kernels (`layer`) and copies (device to device, standing for the all-to-all) on their streams, issued {}",
        match plan {
            chunk_pair::Plan::OneStream => "on one stream, the forward chunk and then the backward chunk",
            chunk_pair::Plan::ChunkByChunk => "on two streams, the forward chunk and then the backward chunk",
            chunk_pair::Plan::DualPipe => "on two streams in DualPipe's order",
        }
    );
    let command = overlap_command(a, "--svg DIR");
    Ok(Output { body: Body::Timeline(run.timeline(&title)), caption, ran_on: Some(viz::backend_label(gpu)), command: Some(command) })
}

/// The `gpubook overlap` command line for the marker's settings.
fn overlap_command(a: &Args, extra: &str) -> String {
    let mut c = "gpubook overlap".to_string();
    for (key, flag) in [("n", "--n"), ("rounds", "--rounds"), ("blocks-per-sm", "--blocks-per-sm")] {
        if let Some(v) = a.raw(key) {
            c += &format!(" {flag} {v}");
        }
    }
    if !extra.is_empty() {
        c += &format!(" {extra}");
    }
    c
}

fn overlap_table(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["n", "rounds", "blocks-per-sm", "comm", "comm-sms"])?;
    let gpu = lab.gpu()?;
    match a.raw("comm") {
        None | Some("copies") => {}
        Some("kernel") => return comm_sweep_table(a, gpu),
        Some(other) => bail!("`comm={other}`: copies or kernel"),
    }
    let (n, config) = chunk_pair_setup(a, gpu)?;
    let runs = chunk_pair::compare(gpu, n, config, chunk_pair::default_reps(gpu))?;
    let caption = format!("One chunk pair of {n} floats a buffer, issued three ways");
    let body = Body::Markdown(chunk_pair::overlap_table(&runs));
    Ok(Output { body, caption, ran_on: Some(viz::backend_label(gpu)), command: Some(overlap_command(a, "")) })
}

/// `{{#run overlap comm=kernel comm-sms=4,8,16}}`: the chunk pair with its communication as a
/// kernel on k SMs, against copies (`gpubook overlap --comm kernel`).
fn comm_sweep_table(a: &Args, gpu: &Gpu) -> anyhow::Result<Output> {
    if a.raw("blocks-per-sm").is_some() {
        bail!("`blocks-per-sm=` goes with copies: the kernel's blocks each hold a whole SM");
    }
    let n = a.get("n", chunk_pair::default_len(gpu))?;
    let rounds = a.get("rounds", chunk_pair::PairConfig::for_device(gpu).rounds)?;
    let sms: Vec<u32> = match a.raw("comm-sms") {
        Some(raw) => raw
            .split(',')
            .map(|v| v.trim().parse().with_context(|| format!("comm-sms={raw}: numbers, comma-separated")))
            .collect::<anyhow::Result<_>>()?,
        None => chunk_pair::default_comm_sms(gpu),
    };
    let rows = chunk_pair::comm_sweep(gpu, n, rounds, &sms, chunk_pair::default_reps(gpu))?;
    let caption = format!(
        "One chunk pair of {n} floats a buffer in DualPipe's order: copies beside a computation that fills the GPU, \
         then a communication kernel on k SMs of its own beside a computation on all the others"
    );
    let mut command = overlap_command(a, "--comm kernel");
    if let Some(raw) = a.raw("comm-sms") {
        command += &format!(" --comm-sms {raw}");
    }
    let body = Body::Markdown(chunk_pair::comm_sweep_table(&rows));
    Ok(Output { body, caption, ran_on: Some(viz::backend_label(gpu)), command: Some(command) })
}

/// `{{#figure streams DESIGN chunks= elems=}}`: one of chapter 7-8's pipelines (gpubook_labs::overlap).
fn streams_figure(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(2, &["chunks", "elems"])?;
    let key = a.positional(1).unwrap_or("ping-pong");
    let design =
        gpubook_labs::overlap::Design::from_key(key).ok_or_else(|| anyhow!("no design `{key}` (serial, ping-pong, three-streams)"))?;
    let (chunks, elems) = (a.get("chunks", 8usize)?, a.get("elems", 1usize << 18)?);
    let gpu = lab.gpu()?;
    let run = gpubook_labs::overlap::run(gpu, design, chunks, elems)?;
    let title = format!("{}: {chunks} chunks of {}", design.name(), human_bytes(elems * 4));
    let caption = format!(
        "Copy in, y = 2x + 0.5, copy out, chunk by chunk: {}; {:.0}% of the copy time overlapped other work",
        design.name(),
        100.0 * run.hidden().fraction()
    );
    let command = format!("gpubook streams-bench --chunks {chunks} --chunk-elems {elems} --svg DIR");
    Ok(Output { body: Body::Timeline(run.timeline(&title)), caption, ran_on: Some(viz::backend_label(gpu)), command: Some(command) })
}

fn human_bytes(b: usize) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) { format!("{} MiB", b >> 20) } else { format!("{} KiB", b >> 10) }
}

/// `{{#run streams-bench chunks= elems=}}`: `gpubook streams-bench`'s report.
fn streams_bench(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["chunks", "elems", "bw", "reps"])?;
    let (chunks, elems, bw) = (a.get("chunks", 8usize)?, a.get("elems", 1usize << 18)?, a.bytes("bw", 16 << 20)?);
    let reps = a.get("reps", 3usize)?;
    let gpu = lab.gpu()?;
    let (report, _) = gpubook_labs::overlap::report(gpu, chunks, elems, bw, reps)?;
    let caption = format!(
        "Three designs of one chunked job, {chunks} chunks of {}, against their bound; then pinned against pageable copies",
        human_bytes(elems * 4)
    );
    let command = format!("gpubook streams-bench --chunks {chunks} --chunk-elems {elems} --bw-mib {} --reps {reps}", bw >> 20);
    Ok(Output { body: Body::Markdown(report), caption, ran_on: Some(viz::backend_label(gpu)), command: Some(command) })
}

/// `{{#figure diagram NAME}}`: one of the book's drawn diagrams (computed, no device).
fn diagram(a: &Args) -> anyhow::Result<Output> {
    a.only(2, &[])?;
    let name = a.positional(1).ok_or_else(|| anyhow!("names no diagram ({})", viz::diagram::NAMES.join(", ")))?;
    let (svg, caption) = viz::diagram::draw(name).ok_or_else(|| anyhow!("no diagram `{name}` ({})", viz::diagram::NAMES.join(", ")))?;
    Ok(Output { body: Body::Svg(svg.0), caption: caption.to_string(), ran_on: None, command: None })
}

/// An expert-parallel output made without a device.
fn computed((made, caption): (Made, String)) -> anyhow::Result<Output> {
    Ok(Output { body: body(made), caption, ran_on: None, command: None })
}

/// An expert-parallel output made on the build's device.
fn ran(lab: &Lab, make: impl FnOnce(&Gpu) -> anyhow::Result<(Made, String)>) -> anyhow::Result<Output> {
    let gpu = lab.gpu()?;
    let (made, caption) = make(gpu)?;
    Ok(Output { body: body(made), caption, ran_on: Some(viz::backend_label(gpu)), command: None })
}

fn body(made: Made) -> Body {
    match made {
        Made::Svg(svg) => Body::Svg(svg.0),
        Made::Text(text) => Body::Text(text),
        Made::Markdown(md) => Body::Markdown(md),
    }
}

/// Where the emulator's counts come from, in a caption.
const COUNTED: &str = "the CPU emulator (counted in check mode)";

/// `{{#figure sectors}}`: `strided_read` at strides 1 to 32, its loads counted.
fn sectors(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &[])?;
    let gpu = counted::counting_emulator()?;
    let points = counted::sectors_by_stride(&gpu, &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32])?;
    let svg = viz::sectors_svg(&points, "A warp loads one float a lane, `stride` floats apart");
    let caption = "32-byte sectors per warp request and the share of their bytes used, against the stride between lanes".into();
    Ok(Output { body: Body::Svg(svg.0), caption, ran_on: Some(COUNTED.into()), command: None })
}

/// `{{#run bank-conflicts}}`: 32 warps read the columns of a 32 × (32 + pad) tile.
fn bank_conflicts(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &[])?;
    let gpu = counted::counting_emulator()?;
    let rows = counted::passes_by_padding(&gpu, &[0, 1, 2, 4, 8])?;
    let caption = "Each warp reads one column of the tile (`tile_columns` in kernels/perf/memory.cu)".into();
    Ok(Output { body: Body::Markdown(counted::passes_table(&rows)), caption, ran_on: Some(COUNTED.into()), command: None })
}

/// `{{#figure occupancy registers=32,64,128 shared=0}}`: computed from an H200's limits.
fn occupancy(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &["registers", "shared"])?;
    let registers: Vec<u32> = a
        .get("registers", "32,64,128".to_string())?
        .split(',')
        .map(|r| r.trim().parse().context("`registers=` takes numbers, comma-separated"))
        .collect::<anyhow::Result<_>>()?;
    let shared: u32 = a.get("shared", 0)?;
    let title = if shared == 0 {
        "Occupancy on an H200 SM".to_string()
    } else {
        format!("Occupancy on an H200 SM, {shared} bytes of shared memory a block")
    };
    let svg = viz::occupancy_svg(&gpubook::gpu::SmLimits::H200, &registers, shared, &title);
    let caption = "Resident warps as a share of the SM's 64, from the H200's limits (registers, warps, blocks, shared memory)".into();
    Ok(Output { body: Body::Svg(svg.0), caption, ran_on: None, command: None })
}

/// `{{#run perf-bench sections=a,b}}`: `gpubook perf-bench`'s table, on the book's device (at the
/// emulator's default size there).
fn perf_bench(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    a.only(1, &["sections", "elements"])?;
    let gpu = lab.gpu()?;
    let mut config = perf::BenchConfig::for_device(gpu);
    config.elements = a.get("elements", config.elements)?;
    let run = perf::run(gpu, config)?;
    let sections = a.get("sections", String::new())?;
    let shown = if sections.is_empty() { run } else { run.only(&sections.split(',').map(str::trim).collect::<Vec<_>>()) };
    let report: String = perf::table(&shown).lines().filter(|l| !l.trim().is_empty()).map(|l| format!("{l}\n")).collect();
    let caption = format!(
        "`gpubook perf-bench --elements {}`{}",
        shown.config.elements,
        if sections.is_empty() { String::new() } else { format!(", the {sections} rows") }
    );
    Ok(Output { body: Body::Text(report), caption, ran_on: Some(viz::backend_label(gpu)), command: Some("gpubook perf-bench".into()) })
}

fn measured_roofline(a: &Args, lab: &Lab) -> anyhow::Result<(roofline::Roofline, String)> {
    a.only(1, &["elements"])?;
    let gpu = lab.gpu()?;
    let mut config = perf::BenchConfig::for_device(gpu);
    config.elements = a.get("elements", config.elements)?;
    Ok((roofline::measure(gpu, config)?, viz::backend_label(gpu)))
}

/// `{{#figure roofline}}`: measured on a GPU; on the emulator, counted bytes under an H200's
/// datasheet roofs.
fn roofline_figure(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    let (r, label) = measured_roofline(a, lab)?;
    let svg = viz::roofline_svg(&r, &format!("The roofline, {label}"));
    let caption = if r.backend == gpubook::gpu::BackendKind::Emulator {
        "The book's kernels at the intensity of the bytes the emulator counted (no caches), drawn at the most an H200's datasheet roofs allow them: hollow, since nothing was timed".into()
    } else {
        format!("The book's kernels timed under the roofs measured in the same run on {label}")
    };
    Ok(Output { body: Body::Svg(svg.0), caption, ran_on: Some(label), command: Some("gpubook perf-bench".into()) })
}

/// `{{#run roofline}}`: the same as a table.
fn roofline_table(a: &Args, lab: &Lab) -> anyhow::Result<Output> {
    let (r, label) = measured_roofline(a, lab)?;
    let text: String = roofline::table(&r).lines().filter(|l| !l.trim().is_empty()).map(|l| format!("{l}\n")).collect();
    Ok(Output {
        body: Body::Text(text),
        caption: "`gpubook perf-bench`'s roofline table".into(),
        ran_on: Some(label),
        command: Some("gpubook perf-bench".into()),
    })
}

/// `{{#run scan-work}}`: three block scans of 256 values, counted.
fn scan_work(a: &Args) -> anyhow::Result<Output> {
    a.only(1, &[])?;
    let gpu = counted::counting_emulator()?;
    let rows = counted::scan_work(&gpu)?;
    let caption = "One block of 256 threads scanning 256 values, each way (kernels/perf/block_scans.cu and scan.cu)".into();
    Ok(Output { body: Body::Markdown(counted::scan_work_table(&rows)), caption, ran_on: Some(COUNTED.into()), command: None })
}
