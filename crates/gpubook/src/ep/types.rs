//! The data the expert-parallel exercises pass around, rank by rank.

use crate::gpu::DeviceSlice;
use serde::Serialize;

/// Where a rank's tokens go (chapter 12's `get_dispatch_layout`, after DeepEP's).
pub struct Layout {
    /// `[ranks]`: tokens this rank sends to each rank (a token goes to a rank once, however
    /// many of its experts live there).
    pub num_tokens_per_rank: DeviceSlice<i32>,
    /// `[experts]`: tokens of this rank routed to each expert.
    pub num_tokens_per_expert: DeviceSlice<i32>,
    /// `[tokens × ranks]`: -1 where token t does not go to rank d, else its place among the
    /// tokens this rank sends to d, in token order. DeepEP keeps a bool here (`is_token_in_rank`)
    /// and finds places later, per channel; the place itself lets a token go straight to its slot.
    pub send_pos: DeviceSlice<i32>,
}

/// One rank's tokens and their routing, on its device.
pub struct RankTokens {
    /// `[tokens × hidden]`.
    pub x: DeviceSlice<f32>,
    /// `[tokens × topk]`: global expert numbers.
    pub topk_idx: DeviceSlice<i32>,
    /// `[tokens × topk]`.
    pub topk_weights: DeviceSlice<f32>,
}

/// A gate's choice for every token of one rank, on its device.
pub struct Routing {
    /// `[tokens × topk]`: global expert numbers, best first.
    pub topk_idx: DeviceSlice<i32>,
    /// `[tokens × topk]`.
    pub topk_weights: DeviceSlice<f32>,
}

/// The sizes of a MoE layer's exchange: every rank holds `tokens` tokens of `hidden` floats,
/// each routed to `topk` of `experts` experts, expert e living on rank `e / (experts / ranks)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoeShape {
    pub tokens: usize,
    pub hidden: usize,
    pub experts: usize,
    pub topk: usize,
}

/// What dispatch delivers to each rank: its received tokens in slots `0..num_recv`, ordered by
/// source rank, then by token (DeepEP's order).
pub struct Received {
    /// `[cap × hidden]`.
    pub x: super::Symmetric<f32>,
    /// `[cap × topk]`: this rank's local expert numbers (`e - rank * experts_per_rank`), -1 for
    /// experts on other ranks.
    pub topk_idx: super::Symmetric<i32>,
    /// `[cap × topk]`: the gate weights, 0 where `topk_idx` is -1.
    pub topk_weights: super::Symmetric<f32>,
    /// `[cap]`: where each token came from, `src_rank * tokens + t`.
    pub src: super::Symmetric<i32>,
}

/// The RDMA buffers of DeepEP's two-hop path (chapter 13): on every rank, one region of `tokens`
/// messages per source node.
pub struct RdmaBuffers {
    /// `[nodes × tokens × hidden]`.
    pub x: super::Symmetric<f32>,
    /// `[nodes × tokens × (1 + topk + gpus_per_node)]`: the token's index, its topk_idx, and its
    /// send_pos for each rank of this node.
    pub meta: super::Symmetric<i32>,
    /// `[nodes × tokens × topk]`.
    pub topk_weights: super::Symmetric<f32>,
    /// `[nodes]`: messages received from each node, zeroed before the dispatch.
    pub count: super::Symmetric<i32>,
}

/// How a communication kernel's channels are set up (chapter 14): `channels` channels of two
/// blocks each, every channel with a ring of `slots` token rows; the sender side publishes its
/// tail `chunk` tokens at a time, and has `senders` sender warps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelConfig {
    pub channels: usize,
    pub slots: usize,
    pub chunk: usize,
    pub senders: usize,
}

/// Every channel's ring, on the GPU that receives (chapter 14).
pub struct Rings {
    /// `[channels × slots × hidden]`: the token rows.
    pub x: DeviceSlice<f32>,
    /// `[channels × slots]`: the token each slot holds.
    pub src: DeviceSlice<i32>,
    /// `[channels × 2]`: each ring's head (tokens read) and tail (tokens written), zeroed.
    pub counters: DeviceSlice<i32>,
}

/// The tokens that arrive at a node's forwarding GPU, and where each one goes (chapter 14).
pub struct Incoming {
    /// `[tokens × hidden]`.
    pub x: DeviceSlice<f32>,
    /// `[tokens × gpus_per_node]`: the token's row in each GPU's receive buffer, or -1.
    pub place: DeviceSlice<i32>,
    pub tokens: usize,
    pub hidden: usize,
}

/// Messages and bytes over each link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TrafficCount {
    pub ib_messages: u64,
    pub ib_bytes: u64,
    pub nvlink_messages: u64,
    pub nvlink_bytes: u64,
}

/// One combine problem (chapter 9): `tokens × top_k` rows go through their experts and come
/// back summed.
#[derive(Debug, Clone)]
pub struct CombineInput {
    /// Tokens of this rank (rows of the output).
    pub tokens: usize,
    /// Experts per token.
    pub top_k: usize,
    /// Floats per row.
    pub hidden: usize,
    pub experts: usize,
    /// The rows the experts process, `[tokens * top_k][hidden]`: row m is token m / top_k's copy
    /// for its (m % top_k)-th expert.
    pub x: Vec<f32>,
    /// Which expert processes row m.
    pub expert_of: Vec<i32>,
    /// Row m's gate weight in the sum.
    pub weight: Vec<f32>,
    /// Each expert's per-channel scale and bias, `[experts][hidden]`.
    pub scale: Vec<f32>,
    pub bias: Vec<f32>,
}
