//! The links between ranks, which this machine does not have and so are modelled, never free:
//! NVLink inside a node and InfiniBand between nodes, at the bandwidths the DeepSeek-V3 report
//! gives for its cluster (§3.2.2: "NVLink offers a bandwidth of 160 GB/s, roughly 3.2 times that
//! of IB (50 GB/s)"). A store into a peer's buffer on one device is a real store; the time it would
//! take over the wire comes from here.

use super::topology::Topology;
use serde::Serialize;

/// Which wire a transfer crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Link {
    /// Inside a node, GPU to GPU.
    NvLink,
    /// Between nodes, one NIC per GPU (DeepEP's RDMA).
    Ib,
}

impl Link {
    pub fn name(self) -> &'static str {
        match self {
            Link::NvLink => "NVLink",
            Link::Ib => "IB",
        }
    }
}

/// Bandwidth of each link, per GPU and per direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkModel {
    /// NVLink, GB/s (10^9 bytes per second).
    pub nvlink_gb_s: f64,
    /// InfiniBand, GB/s.
    pub ib_gb_s: f64,
}

impl LinkModel {
    /// The DeepSeek-V3 report's figures for its H800 cluster: NVLink 160 GB/s, IB 50 GB/s.
    pub const DEEPSEEK_V3: LinkModel = LinkModel { nvlink_gb_s: 160.0, ib_gb_s: 50.0 };

    pub fn gb_s(&self, link: Link) -> f64 {
        match link {
            Link::NvLink => self.nvlink_gb_s,
            Link::Ib => self.ib_gb_s,
        }
    }

    /// Microseconds to move `bytes` over `link` (1 GB/s is 1,000 bytes per µs).
    pub fn time_us(&self, link: Link, bytes: u64) -> f64 {
        bytes as f64 / (self.gb_s(link) * 1e3)
    }

    /// How many NVLink copies fit in the time of one IB transfer of the same size: the report's
    /// "roughly 3.2 times".
    pub fn ratio(&self) -> f64 {
        self.nvlink_gb_s / self.ib_gb_s
    }

    /// One line for every output built on this model.
    pub fn statement(&self) -> String {
        format!(
            "links are modelled, not measured: NVLink {} GB/s and IB {} GB/s per GPU and direction (the DeepSeek-V3 \
             report's cluster); the ranks share this machine's memory",
            self.nvlink_gb_s, self.ib_gb_s
        )
    }
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel::DEEPSEEK_V3
    }
}

/// Bytes and messages that went from one rank to another over one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transfer {
    pub src: usize,
    pub dst: usize,
    pub link: Link,
    pub bytes: u64,
    pub messages: u64,
}

/// What one phase of communication moved. A rank sending to itself moves nothing over a link
/// and is not recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Traffic {
    pub transfers: Vec<Transfer>,
}

impl Traffic {
    /// Adds `messages` of `bytes_each` from `src` to `dst`, on the link their places imply.
    pub fn add(&mut self, topo: &Topology, src: usize, dst: usize, messages: u64, bytes_each: u64) {
        if src == dst || messages == 0 {
            return;
        }
        let link = if topo.same_node(src, dst) { Link::NvLink } else { Link::Ib };
        self.transfers.push(Transfer { src, dst, link, bytes: messages * bytes_each, messages });
    }

    pub fn bytes(&self, link: Link) -> u64 {
        self.transfers.iter().filter(|t| t.link == link).map(|t| t.bytes).sum()
    }

    pub fn messages(&self, link: Link) -> u64 {
        self.transfers.iter().filter(|t| t.link == link).map(|t| t.messages).sum()
    }

    /// Bytes `rank` sends and receives over `link`.
    pub fn out_in(&self, rank: usize, link: Link) -> (u64, u64) {
        let sum = |f: &dyn Fn(&Transfer) -> bool| self.transfers.iter().filter(|t| t.link == link && f(t)).map(|t| t.bytes).sum();
        (sum(&|t| t.src == rank), sum(&|t| t.dst == rank))
    }

    /// The modelled time `rank`'s `link` is busy in this phase: its busier direction at full
    /// bandwidth (a NIC or an NVLink port sends and receives at the same time).
    pub fn busy_us(&self, model: &LinkModel, rank: usize, link: Link) -> f64 {
        let (out, inn) = self.out_in(rank, link);
        model.time_us(link, out.max(inn))
    }

    /// The phase's modelled time on the links: the busiest rank's busiest link.
    pub fn time_us(&self, model: &LinkModel, ranks: usize) -> f64 {
        (0..ranks).flat_map(|r| [Link::NvLink, Link::Ib].map(|l| self.busy_us(model, r, l))).fold(0.0, f64::max)
    }

    pub fn merge(&mut self, other: &Traffic) {
        self.transfers.extend_from_slice(&other.transfers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_the_topology_and_a_rank_to_itself_is_free() {
        let topo = Topology::new(2, 2).unwrap();
        let mut t = Traffic::default();
        t.add(&topo, 0, 1, 10, 100); // same node
        t.add(&topo, 0, 2, 4, 100); // across nodes
        t.add(&topo, 3, 3, 99, 100); // itself
        assert_eq!((t.bytes(Link::NvLink), t.bytes(Link::Ib), t.messages(Link::Ib)), (1000, 400, 4));
        let m = LinkModel::DEEPSEEK_V3;
        assert_eq!(t.busy_us(&m, 0, Link::NvLink), 1000.0 / 160e3);
        assert_eq!(t.time_us(&m, 4), 400.0 / 50e3, "IB at 50 GB/s is the slower one here");
        assert!((m.ratio() - 3.2).abs() < 1e-12);
    }
}
