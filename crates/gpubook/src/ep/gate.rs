//! The gate's settings, shared by the kernels, the host reference, `gpubook moe route` and the
//! exercises.

use super::topology::ShapeError;
use serde::Serialize;

/// DeepSeek-V3's routing settings (`n_routed_experts`, `n_expert_groups`, `n_limited_groups`,
/// `n_activated_experts`, `route_scale` in its `config_671B.json`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateConfig {
    pub experts: usize,
    /// Experts come in this many groups of equal size (V3: 8, one per node).
    pub groups: usize,
    /// A token may only use the experts of this many groups (V3: 4).
    pub topk_groups: usize,
    /// Experts per token (V3: 8).
    pub topk: usize,
    /// The weights are normalised to sum to 1, then multiplied by this (V3: 2.5).
    pub route_scale: f32,
}

impl GateConfig {
    /// The most experts the library's gate kernel handles (its per-thread arrays).
    pub const MAX_EXPERTS: usize = 512;
    /// The most groups it handles.
    pub const MAX_GROUPS: usize = 64;

    /// DeepSeek-V3 (671B): 256 routed experts in 8 groups, 4 groups per token, 8 experts, 2.5.
    pub const DEEPSEEK_V3: GateConfig = GateConfig { experts: 256, groups: 8, topk_groups: 4, topk: 8, route_scale: 2.5 };

    /// One group, no group limit (chapter 12's gate).
    pub fn plain(experts: usize, topk: usize, route_scale: f32) -> GateConfig {
        GateConfig { experts, groups: 1, topk_groups: 1, topk, route_scale }
    }

    pub fn experts_per_group(&self) -> usize {
        self.experts / self.groups.max(1)
    }

    /// Experts a token can still choose from once the group limit is applied.
    pub fn reachable(&self) -> usize {
        self.topk_groups * self.experts_per_group()
    }

    /// Whether the settings make a gate: the errors say what to change.
    pub fn check(&self) -> Result<(), ShapeError> {
        let e = |m: String| Err(ShapeError(m));
        if self.experts == 0 || self.topk == 0 {
            return e(format!("the gate needs at least one expert and topk >= 1 (experts = {}, topk = {})", self.experts, self.topk));
        }
        if self.groups == 0 || !self.experts.is_multiple_of(self.groups) {
            return e(format!("{} experts cannot be split into {} groups of equal size", self.experts, self.groups));
        }
        if self.groups > 1 && self.experts_per_group() < 2 {
            return e(format!(
                "each group needs at least 2 experts (a group's score is the sum of its two best), but {} experts in {} \
                 groups leaves {}",
                self.experts,
                self.groups,
                self.experts_per_group()
            ));
        }
        if self.topk_groups == 0 || self.topk_groups > self.groups {
            return e(format!("topk_groups must be between 1 and the {} groups, not {}", self.groups, self.topk_groups));
        }
        if self.topk > self.reachable() {
            return e(format!(
                "topk = {} is more than the {} experts left in {} of {} groups ({} experts each)",
                self.topk,
                self.reachable(),
                self.topk_groups,
                self.groups,
                self.experts_per_group()
            ));
        }
        if !self.route_scale.is_finite() {
            return e(format!("route_scale must be a finite number, not {}", self.route_scale));
        }
        Ok(())
    }

    /// [`check`](Self::check), plus the kernels' limits.
    pub fn check_for_kernels(&self) -> Result<(), ShapeError> {
        self.check()?;
        if self.experts > Self::MAX_EXPERTS || self.groups > Self::MAX_GROUPS {
            return Err(ShapeError(format!(
                "the gate kernels handle at most {} experts in {} groups ({} in {} asked for)",
                Self::MAX_EXPERTS,
                Self::MAX_GROUPS,
                self.experts,
                self.groups
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_say_what_is_wrong() {
        assert!(GateConfig::DEEPSEEK_V3.check().is_ok());
        let bad = |c: GateConfig| c.check().unwrap_err().0;
        assert!(bad(GateConfig { groups: 3, ..GateConfig::DEEPSEEK_V3 }).contains("groups of equal size"));
        assert!(bad(GateConfig { topk: 129, ..GateConfig::DEEPSEEK_V3 }).contains("128 experts left"));
        assert!(bad(GateConfig { topk_groups: 9, ..GateConfig::DEEPSEEK_V3 }).contains("between 1 and the 8 groups"));
        assert!(bad(GateConfig { experts: 8, groups: 8, topk_groups: 1, topk: 1, route_scale: 1.0 }).contains("at least 2"));
    }
}
