//! The expert-parallel chapters' outputs (12-14):
//!
//! | marker | makes |
//! |---|---|
//! | `{{#figure moe-routing nodes=4 gpus=2 experts=32 topk=6 limit=2 tokens=12 seed=1}}` | the experts V3's gate chooses, without and with the node limit |
//! | `{{#figure two-hop nodes=4 gpus=4 experts=64 topk=8 limit=3 seed=1 token=0}}` | one token's two hops |
//! | `{{#figure moe-timeline nodes=1 gpus=4 tokens=64 hidden=64 experts=16 topk=4 limit=1 channels=4 seed=1}}` | a MoE layer's phases on its world clock |
//! | `{{#run moe ...same keys...}}` | `gpubook moe run`'s report |
//! | `{{#run moe-limits nodes=8 gpus=8 experts=256 topk=8 tokens=64 seed=1}}` | traffic per token against the node limit |
//! | `{{#run channel-sweep channels=1,2,4}}`, `{{#run sm-share k=2,8,20}}` | chapter 14's measurements (`gpubook moe channels`) |

use super::markers::Args;
use gpubook::ep::{LinkModel, Topology};
use gpubook::gpu::Gpu;
use gpubook_labs::ep::moe::{self, MoeConfig};
use gpubook_labs::ep::study::{limit_rows, limit_table, sample_routing};
use gpubook_labs::viz;

/// What a marker made, with its caption; outputs.rs adds where it ran.
pub enum Made {
    Svg(viz::Svg),
    Text(String),
    Markdown(String),
}

const LAYER_KEYS: [&str; 9] = ["nodes", "gpus", "tokens", "hidden", "experts", "topk", "limit", "channels", "seed"];

fn layer(a: &Args) -> anyhow::Result<MoeConfig> {
    a.only(1, &LAYER_KEYS)?;
    let c = MoeConfig {
        nodes: a.get("nodes", 1)?,
        gpus_per_node: a.get("gpus", 4)?,
        tokens: a.get("tokens", 64)?,
        hidden: a.get("hidden", 64)?,
        experts: a.get("experts", 16)?,
        topk: a.get("topk", 4)?,
        limit_nodes: a.get("limit", 1)?,
        channels: a.get("channels", 4)?,
        seed: a.get("seed", 1)?,
    };
    c.check()?;
    Ok(c)
}

fn command(c: &MoeConfig) -> String {
    format!(
        "gpubook moe run --nodes {} --gpus-per-node {} --tokens {} --hidden {} --experts {} --topk {} --limit-nodes {} --channels {} --seed {}",
        c.nodes, c.gpus_per_node, c.tokens, c.hidden, c.experts, c.topk, c.limit_nodes, c.channels, c.seed
    )
}

pub fn moe_timeline(a: &Args, gpu: &Gpu) -> anyhow::Result<(Made, String)> {
    let c = layer(a)?;
    let run = moe::run(gpu, &c)?;
    let topo = c.topology()?;
    let title = format!("A MoE layer on {topo}: {} tokens per rank", c.tokens);
    let caption = format!("`{}`: each phase between two world barriers, kernels and modelled links", command(&c));
    Ok((Made::Svg(viz::world_timeline_svg(&run.timeline, &title)), caption))
}

pub fn moe_report(a: &Args, gpu: &Gpu) -> anyhow::Result<(Made, String)> {
    let c = layer(a)?;
    let run = moe::run(gpu, &c)?;
    // A blank line would end the HTML block the text sits in.
    let text: String =
        format!("{}\n{}", c.describe(), run.report()).lines().filter(|l| !l.trim().is_empty()).map(|l| format!("{l}\n")).collect();
    Ok((Made::Text(text), format!("`{}`", command(&c))))
}

fn routing_keys(a: &Args) -> anyhow::Result<(Topology, usize, usize, usize, u64)> {
    let topo = Topology::new(a.get("nodes", 4)?, a.get("gpus", 2)?)?;
    Ok((topo, a.get("experts", 32)?, a.get("topk", 6)?, a.get("limit", 2)?, a.get("seed", 1)?))
}

pub fn routing_figure(a: &Args) -> anyhow::Result<(Made, String)> {
    a.only(1, &["nodes", "gpus", "experts", "topk", "limit", "tokens", "seed"])?;
    let (topo, experts, topk, limit, seed) = routing_keys(a)?;
    let tokens = a.get("tokens", 12usize)?;
    let free = sample_routing(topo, experts, topk, topo.nodes(), tokens, seed)?;
    let p1 = "No node limit".to_string();
    let svg = if limit >= topo.nodes() {
        viz::routing_svg(&[(&p1, &free[0])], topo, experts)
    } else {
        let limited = sample_routing(topo, experts, topk, limit, tokens, seed)?;
        let p2 = format!("At most {limit} nodes per token (groups = nodes, keep the {limit} best)");
        viz::routing_svg(&[(&p1, &free[0]), (&p2, &limited[0])], topo, experts)
    };
    let caption = format!(
        "DeepSeek-V3's gate on the same random logits of {tokens} tokens, {experts} experts on {} nodes, top-{topk}, computed on the host",
        topo.nodes()
    );
    Ok((Made::Svg(svg), caption))
}

pub fn two_hop_figure(a: &Args) -> anyhow::Result<(Made, String)> {
    a.only(1, &["nodes", "gpus", "experts", "topk", "limit", "token", "rank", "seed"])?;
    let (topo, experts, topk, limit, seed) = routing_keys(a)?;
    let (token, rank) = (a.get("token", 0usize)?, a.get("rank", 1usize)?);
    anyhow::ensure!(rank < topo.ranks(), "rank={rank} is past the {} ranks", topo.ranks());
    let routing = sample_routing(topo, experts, topk, limit, token + 1, seed)?;
    let svg = viz::two_hop_svg(topo, experts, rank, routing[rank].experts_of(token));
    let caption = format!(
        "Token {token} of rank {rank}, routed by V3's gate (host) to at most {limit} of {} nodes; its IB and NVLink messages",
        topo.nodes()
    );
    Ok((Made::Svg(svg), caption))
}

pub fn limits_table(a: &Args) -> anyhow::Result<(Made, String)> {
    a.only(1, &["nodes", "gpus", "experts", "topk", "tokens", "bytes", "seed"])?;
    let topo = Topology::new(a.get("nodes", 8)?, a.get("gpus", 8)?)?;
    let (experts, topk, tokens, bytes, seed) =
        (a.get("experts", 256)?, a.get("topk", 8)?, a.get("tokens", 64)?, a.get("bytes", 7168u64)?, a.get("seed", 1)?);
    let rows = limit_rows(topo, experts, topk, tokens, bytes, seed)?;
    let caption = format!(
        "V3's gate (host) on {tokens} random tokens per rank, {experts} experts on {topo}, top-{topk}, {bytes}-byte messages; \
         times at NVLink 160 GB/s and IB 50 GB/s per GPU"
    );
    Ok((Made::Markdown(limit_table(&rows, &LinkModel::DEEPSEEK_V3)), caption))
}

/// `{{#run channel-sweep channels=1,2,4}}`: chapter 14's warp-roles dispatch against its channels.
pub fn channel_sweep(a: &Args, gpu: &Gpu) -> anyhow::Result<(Made, String)> {
    use gpubook_labs::channels::{SweepConfig, channel_sweep, sweep_table};
    a.only(1, &["channels"])?;
    let channels = list(a, "channels", "1,2,4,8")?;
    let cfg = SweepConfig::for_device(gpu);
    let rows = channel_sweep(gpu, &cfg, &channels)?;
    let caption = "`gpubook moe channels`: the warp-roles dispatch, every rank on one device (no link modelled), each run \
                   checked; median of CUDA events on a GPU, the emulator's timeline model otherwise"
        .to_string();
    Ok((Made::Text(sweep_table(gpu, &cfg, &rows)), caption))
}

/// `{{#run sm-share k=2,8,20}}`: a multiply beside a communication kernel on k SMs.
pub fn sm_share(a: &Args, gpu: &Gpu) -> anyhow::Result<(Made, String)> {
    use gpubook_labs::channels::{ShareConfig, share_table, sm_share};
    a.only(1, &["k"])?;
    let ks = list(a, "k", "2,8,20")?;
    let cfg = ShareConfig::for_device(gpu);
    let rows = sm_share(gpu, &cfg, &ks)?;
    let caption = "`gpubook moe channels`: the multiply alone, beside the copy kernel (its own time), the copy alone, \
                   both together, and how much of the shorter one the other hid"
        .to_string();
    Ok((Made::Text(share_table(gpu, &cfg, &rows)), caption))
}

fn list(a: &Args, key: &str, default: &str) -> anyhow::Result<Vec<usize>> {
    let raw: String = a.get(key, default.to_string())?;
    raw.split(',').map(|v| v.trim().parse().map_err(|_| anyhow::anyhow!("{key}={raw}: a comma-separated list of numbers"))).collect()
}
