//! `gpubook moe`: DeepSeek-V3's gate on logits from a file (`route`), and a whole MoE layer across
//! a world of ranks on this device (`run`), checked against a dense layer on the host (chapters
//! 12 and 13).

use anyhow::{Context, bail};
use gpubook::ep::GateConfig;
use gpubook::gpu::Gpu;
use gpubook_labs::ep::moe::{self, MoeConfig};
use gpubook_labs::ep::reference;
use gpubook_labs::viz::{backend_label, world_timeline_svg};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Route tokens with DeepSeek-V3's gate: logits and bias from JSON files.
    Route(RouteArgs),
    /// Gate, dispatch, experts and combine across a world of ranks, against a dense MoE on the host.
    Run(RunArgs),
    /// Chapter 14's measurements: a channelled dispatch against its number of channels, and a
    /// matrix multiply beside a communication kernel holding k SMs.
    Channels(ChannelsArgs),
}

#[derive(clap::Args)]
struct ChannelsArgs {
    /// Channel counts to sweep (two SMs each).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,6,8,10,12,16,20,24,32")]
    channels: Vec<usize>,
    /// Blocks of the communication kernel beside the multiply (one SM each).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,10,16,20,24,32,48")]
    comm_sms: Vec<usize>,
}

#[derive(clap::Args)]
struct RouteArgs {
    /// A JSON array of rows, one per token, each with one logit per expert.
    #[arg(long)]
    logits: PathBuf,
    /// A JSON array with one bias per expert (it chooses experts, never weighs them).
    #[arg(long)]
    bias: PathBuf,
    /// Experts come in this many groups of equal size (V3: 8).
    #[arg(long)]
    groups: usize,
    /// A token may use the experts of this many groups (V3: 4).
    #[arg(long)]
    topk_groups: usize,
    /// Experts per token (V3: 8).
    #[arg(long)]
    topk: usize,
    /// The normalised weights are multiplied by this (V3: 2.5).
    #[arg(long, default_value_t = 1.0)]
    route_scale: f32,
    /// Print `{"experts": [[...], ...], "weights": [[...], ...]}`.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct RunArgs {
    #[arg(long)]
    nodes: usize,
    #[arg(long)]
    gpus_per_node: usize,
    /// Tokens per rank.
    #[arg(long)]
    tokens: usize,
    #[arg(long)]
    hidden: usize,
    #[arg(long)]
    experts: usize,
    #[arg(long)]
    topk: usize,
    /// A token reaches at most this many nodes (V3: 4).
    #[arg(long)]
    limit_nodes: usize,
    /// Blocks of each communication kernel, each a slice of the tokens.
    #[arg(long)]
    channels: usize,
    #[arg(long)]
    seed: u64,
    /// Draw the phases' timeline into this SVG file.
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        Command::Route(r) => route(r),
        Command::Run(r) => run_layer(r),
        Command::Channels(c) => channels(c),
    }
}

fn route(a: RouteArgs) -> anyhow::Result<ExitCode> {
    let rows: Vec<Vec<f32>> = read_json(&a.logits, "logits")?;
    let bias: Vec<f32> = read_json(&a.bias, "bias")?;
    let experts = match rows.first() {
        Some(r) => r.len(),
        None => bail!("{}: no tokens (an empty array)", a.logits.display()),
    };
    if let Some((t, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != experts) {
        bail!("{}: row {t} has {} logits but row 0 has {experts}: every token needs one logit per expert", a.logits.display(), r.len());
    }
    if bias.len() != experts {
        bail!("{}: {} biases for {experts} experts (one per expert)", a.bias.display(), bias.len());
    }
    let cfg = GateConfig { experts, groups: a.groups, topk_groups: a.topk_groups, topk: a.topk, route_scale: a.route_scale };
    cfg.check()?;
    let logits: Vec<f32> = rows.concat();
    let r = reference::gate(&logits, &bias, &cfg)?;
    let experts_out: Vec<&[i32]> = (0..r.tokens()).map(|t| r.experts_of(t)).collect();
    let weights_out: Vec<&[f32]> = (0..r.tokens()).map(|t| r.weights_of(t)).collect();
    if a.json {
        println!("{}", serde_json::json!({ "experts": experts_out, "weights": weights_out }));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "DeepSeek-V3's gate: {experts} experts in {} groups, {} groups per token, top-{}, route scale {}",
        cfg.groups, cfg.topk_groups, cfg.topk, cfg.route_scale
    );
    println!("{:>6}  experts (descending biased score) : weights", "token");
    for t in 0..r.tokens() {
        let e: Vec<String> = experts_out[t].iter().map(|e| e.to_string()).collect();
        let w: Vec<String> = weights_out[t].iter().map(|w| format!("{w:.4}")).collect();
        println!("{t:>6}  {} : {}", e.join(" "), w.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads a JSON file into `T`, with an error that names the file and what was expected.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading the {what} from {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        let shape =
            if what == "logits" { "an array of rows of numbers, [[0.1, -2.0, ...], ...]" } else { "an array of numbers, [0.0, 0.01, ...]" };
        format!("{}: the {what} must be {shape}", path.display())
    })
}

fn run_layer(a: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = MoeConfig {
        nodes: a.nodes,
        gpus_per_node: a.gpus_per_node,
        tokens: a.tokens,
        hidden: a.hidden,
        experts: a.experts,
        topk: a.topk,
        limit_nodes: a.limit_nodes,
        channels: a.channels,
        seed: a.seed,
    };
    cfg.check()?;
    let gpu = Gpu::new()?;
    let topo = cfg.topology()?;
    println!("A MoE layer on {}: {topo}, all on this device", backend_label(&gpu));
    println!("{}", cfg.describe());
    let r = moe::run(&gpu, &cfg)?;
    print!("{}", r.report());
    let ok = r.within_tolerance();
    if let Some(path) = a.svg {
        let title = format!("A MoE layer on {topo}");
        world_timeline_svg(&r.timeline, &title).save(&path).with_context(|| format!("writing {}", path.display()))?;
        println!("\nwrote {}", path.display());
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn channels(a: ChannelsArgs) -> anyhow::Result<ExitCode> {
    use gpubook_labs::channels::{ShareConfig, SweepConfig, channel_sweep, share_table, sm_share, sweep_table};
    let gpu = Gpu::new()?;
    println!("Channels and SMs on {} (every rank on this device: the kernels' speed, no link modelled)", backend_label(&gpu));
    let sweep = SweepConfig::for_device(&gpu);
    let rows = channel_sweep(&gpu, &sweep, &a.channels)?;
    println!("\nThe warp-roles dispatch against its channels (each checked: every token arrived)");
    print!("{}", sweep_table(&gpu, &sweep, &rows));
    let share = ShareConfig::for_device(&gpu);
    let rows = sm_share(&gpu, &share, &a.comm_sms)?;
    println!("\nA multiply beside a communication kernel on k SMs");
    print!("{}", share_table(&gpu, &share, &rows));
    Ok(ExitCode::SUCCESS)
}
