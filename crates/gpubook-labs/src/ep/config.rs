//! `gpubook moe run`'s settings: the layer's sizes and the world's shape, checked.

use gpubook::ep::GateConfig;
use gpubook::ep::{ShapeError, Topology};
use serde::Serialize;

/// `gpubook moe run`'s settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MoeConfig {
    pub nodes: usize,
    pub gpus_per_node: usize,
    /// Tokens per rank.
    pub tokens: usize,
    pub hidden: usize,
    pub experts: usize,
    pub topk: usize,
    /// A token reaches at most this many nodes (V3: 4 of 8).
    pub limit_nodes: usize,
    /// Blocks of each communication kernel, each a slice of the tokens.
    pub channels: usize,
    pub seed: u64,
}

/// The route scale of the layer's gate (V3's).
pub const ROUTE_SCALE: f32 = 2.5;
/// Largest hidden size: a token's row and its FFN activations sit in one block's 48 KiB of
/// shared memory.
pub const MAX_HIDDEN: usize = 8192;

impl MoeConfig {
    pub fn topology(&self) -> Result<Topology, ShapeError> {
        Topology::new(self.nodes, self.gpus_per_node)
    }
    pub fn ranks(&self) -> usize {
        self.nodes * self.gpus_per_node
    }
    /// The experts' inner width: half the hidden size.
    pub fn ffn(&self) -> usize {
        (self.hidden / 2).max(1)
    }
    /// One group per node, as V3 places them, limited to `limit_nodes` of them.
    pub fn gate(&self) -> GateConfig {
        let groups = if self.nodes > 1 { self.nodes } else { 1 };
        let topk_groups = if self.nodes > 1 { self.limit_nodes } else { 1 };
        GateConfig { experts: self.experts, groups, topk_groups, topk: self.topk, route_scale: ROUTE_SCALE }
    }

    pub fn check(&self) -> Result<(), ShapeError> {
        let topo = self.topology()?;
        let e = |m: String| Err(ShapeError(m));
        if self.tokens == 0 || self.hidden == 0 {
            return e(format!("tokens and hidden must be at least 1 (got {} and {})", self.tokens, self.hidden));
        }
        if self.hidden > MAX_HIDDEN {
            return e(format!("hidden = {} is more than the {MAX_HIDDEN} the expert kernel holds in shared memory", self.hidden));
        }
        if self.experts == 0 || !self.experts.is_multiple_of(topo.ranks()) {
            return e(format!("{} experts cannot be shared equally by {} ranks", self.experts, topo.ranks()));
        }
        if self.limit_nodes == 0 || self.limit_nodes > self.nodes {
            return e(format!("--limit-nodes must be between 1 and the {} nodes, not {}", self.nodes, self.limit_nodes));
        }
        if self.channels == 0 || self.channels > 1024 {
            return e(format!("--channels must be between 1 and 1024, not {}", self.channels));
        }
        self.gate().check_for_kernels()
    }
}

impl MoeConfig {
    /// The layer's sizes, in lines of at most 88 columns.
    pub fn describe(&self) -> String {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        wrap(
            &format!(
                "{} per rank, hidden {} (expert FFN {} → {} → {}), {} ({} per rank), top-{}, at most {} per token, \
                 {}, seed {}",
                plural(self.tokens, "token"),
                self.hidden,
                self.hidden,
                self.ffn(),
                self.hidden,
                plural(self.experts, "expert"),
                self.experts / self.ranks().max(1),
                self.topk,
                plural(self.limit_nodes, "node"),
                plural(self.channels, "channel"),
                self.seed
            ),
            88,
        )
    }
}

/// `text` in lines of at most `width` columns, broken at spaces.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out += &line;
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    out + &line
}
