//! Expert parallelism as in DeepEP (chapters 12-14): a [`World`] of ranks in nodes, symmetric
//! buffers whose peer tables kernels store through, links modelled from the traffic the kernels
//! count, the phases' timeline, and the data the exercises pass around. The host references,
//! the kernels of `gpubook moe` and the whole MoE layer are gpubook-labs' `ep`.
//!
//! ```no_run
//! use gpubook::ep::{Symmetric, Topology, World};
//! use gpubook::gpu::Gpu;
//! # fn main() -> anyhow::Result<()> {
//! let gpu = Gpu::new()?;
//! let world = World::new(&gpu, Topology::new(2, 4)?)?;     // 8 ranks on this device
//! let recv = Symmetric::<f32>::zeros(&world, 1024, "recv")?; // 1024 floats on every rank
//! // A kernel of rank 3 given `recv.peers(3)` stores into rank 5's copy as `recv[5][i]`.
//! world.barrier()?; // every rank's later work waits for every rank's earlier work
//! # Ok(()) }
//! ```

mod gate;
mod links;
mod peer;
mod symmetric;
mod timeline;
mod topology;
mod types;
mod world;

pub use gate::GateConfig;
pub use links::{Link, LinkModel, Traffic, Transfer};
pub use symmetric::{PeerPtr, Symmetric};
pub use timeline::{Phase, RankPhase, WorldTimeline};
pub use topology::{ShapeError, Topology};
pub use types::{ChannelConfig, CombineInput, Incoming, Layout, MoeShape, RankTokens, RdmaBuffers, Received, Rings, Routing, TrafficCount};
pub use world::{DEVICES_VAR, Rank, World, devices_from_env, spread_devices};
