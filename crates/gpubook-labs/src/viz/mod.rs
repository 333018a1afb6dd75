//! Figures, drawn with plotters as SVG. The book's `{{#figure}}` markers, the notebooks and the
//! CLI call these same functions, so a figure looks the same wherever it appears.
//!
//! Each figure is two steps: data (a launch configuration, a run's [`Trace`](gpubook::gpu::Trace),
//! a simulation) and a drawing of it that returns an [`Svg`].
//!
//! | figure | data | drawing |
//! |---|---|---|
//! | which thread covers which element | [`ThreadMap::predict`] (from the launch configuration) or [`ThreadMap::record`] (a run) | [`thread_map_svg`] |
//! | copy bandwidth against size | [`measure_bandwidth`], or [`bandwidth_from_trace`] of any run | [`bandwidth_svg`] |
//! | streams over time | [`overlap_demo`], or any [`Gpu::trace`](gpubook::gpu::Gpu::trace) | [`timeline_svg`] |
//! | a pipeline-parallel schedule | `gpubook::sim` | [`pipeline_svg`] |
//! | experts chosen per token; one token's two hops | `gpubook::ep` routing | [`routing_svg`], [`two_hop_svg`] |
//! | a world's phases, kernels and modelled links | [`World::timeline`](gpubook::ep::World::timeline) | [`world_timeline_svg`] |
//! | sectors per warp request against stride | [`labs::counted::sectors_by_stride`](crate::counted::sectors_by_stride) | [`sectors_svg`] |
//! | occupancy against block size | an SM's limits | [`occupancy_svg`] |
//! | the roofline | [`labs::roofline::measure`](crate::roofline::measure) | [`roofline_svg`] |

mod bandwidth;
mod cells;
pub mod diagram;
mod ep;
mod memory;
mod pipeline;
mod roofline;
mod style;
mod svg;
mod thread_map;
mod timeline;

pub use bandwidth::{BandwidthPoint, bandwidth_from_trace, bandwidth_svg, default_sizes, measure_bandwidth};
pub use ep::{routing_svg, two_hop_svg, world_timeline_svg};
pub use memory::{occupancy_svg, sectors_svg};
pub use pipeline::pipeline_svg;
pub use roofline::roofline_svg;
pub use style::COLUMN;
pub use svg::Svg;
pub use thread_map::{Owner, Pattern, ThreadMap, thread_map_svg};
pub use timeline::{Bar, BarKind, Labels, Timeline, overlap_demo, timeline_svg};

pub use crate::backend::backend_label;
