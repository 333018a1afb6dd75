//! Who is where: R ranks in nodes of G ranks. Rank r is GPU `r % G` of node `r / G`, as in DeepEP,
//! where a rank's node is its *RDMA rank* and its place in the node its *NVL rank*.

use std::fmt;

/// `nodes` nodes of `gpus_per_node` ranks each (DeepSeek-V3 trains on 8 × 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Topology {
    nodes: usize,
    gpus_per_node: usize,
}

/// Why a topology or a MoE shape was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

impl Topology {
    /// The most ranks a world may have: peer tables and per-rank counters stay small.
    pub const MAX_RANKS: usize = 1024;

    pub fn new(nodes: usize, gpus_per_node: usize) -> Result<Topology, ShapeError> {
        if nodes == 0 || gpus_per_node == 0 {
            return Err(ShapeError(format!("a world needs at least one node of one GPU (got {nodes} × {gpus_per_node})")));
        }
        if nodes.saturating_mul(gpus_per_node) > Self::MAX_RANKS {
            return Err(ShapeError(format!("{nodes} × {gpus_per_node} ranks is more than the {} this runtime allows", Self::MAX_RANKS)));
        }
        Ok(Topology { nodes, gpus_per_node })
    }

    /// One node of `ranks` GPUs: everything over NVLink.
    pub fn single_node(ranks: usize) -> Result<Topology, ShapeError> {
        Topology::new(1, ranks)
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }
    pub fn gpus_per_node(&self) -> usize {
        self.gpus_per_node
    }
    pub fn ranks(&self) -> usize {
        self.nodes * self.gpus_per_node
    }
    /// The node of `rank` (DeepEP's RDMA rank).
    pub fn node_of(&self, rank: usize) -> usize {
        rank / self.gpus_per_node
    }
    /// The place of `rank` in its node (DeepEP's NVL rank).
    pub fn local_of(&self, rank: usize) -> usize {
        rank % self.gpus_per_node
    }
    /// The rank at place `local` of node `node`.
    pub fn rank(&self, node: usize, local: usize) -> usize {
        node * self.gpus_per_node + local
    }
    /// Whether traffic from `a` to `b` crosses nodes (InfiniBand) or stays inside one (NVLink).
    pub fn same_node(&self, a: usize, b: usize) -> bool {
        self.node_of(a) == self.node_of(b)
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        write!(f, "{} of {} ({} ranks)", plural(self.nodes, "node"), plural(self.gpus_per_node, "GPU"), self.ranks())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_numbered_node_major() {
        let t = Topology::new(2, 4).unwrap();
        assert_eq!((t.ranks(), t.node_of(5), t.local_of(5), t.rank(1, 1)), (8, 1, 1, 5));
        assert!(t.same_node(4, 7) && !t.same_node(3, 4));
        assert_eq!(t.to_string(), "2 nodes of 4 GPUs (8 ranks)");
        assert!(Topology::new(0, 4).is_err() && Topology::new(2000, 1).is_err());
    }
}
