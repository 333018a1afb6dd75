//! The data the expert-parallel exercises pass around, rank by rank.

use crate::gpu::DeviceSlice;

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
