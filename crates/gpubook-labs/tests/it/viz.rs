//! The figures' data from real runs (what the book's `{{#figure}}` markers and the notebooks
//! draw), on whichever backend `Gpu::new` picks. Without a device each test prints SKIPPED.

use gpubook::gpu::CopyDir;
use gpubook::testing::device_or_skip;
use gpubook_labs::viz::{self, Owner, Pattern, ThreadMap};

#[test]
fn a_recorded_thread_map_matches_the_prediction() {
    let Some(gpu) = device_or_skip("a_recorded_thread_map_matches_the_prediction") else {
        return;
    };
    let recorded = ThreadMap::record(&gpu, Pattern::OnePerThread, (1, 1000), (4, 1), (256, 1)).unwrap();
    let predicted = ThreadMap::predict((1, 1000), (4, 1), (256, 1));
    assert_eq!(recorded.unwritten(), 0);
    for i in 0..1000 {
        assert_eq!(recorded.owner(0, i), predicted.owner(0, i), "element {i}");
    }
    assert!(recorded.observed_on.is_some());
    assert!(viz::thread_map_svg(&recorded).as_str().contains("observed"));
}

#[test]
fn a_short_grid_leaves_the_end_unwritten_and_a_stride_loop_wraps() {
    let Some(gpu) = device_or_skip("a_short_grid_leaves_the_end_unwritten_and_a_stride_loop_wraps") else {
        return;
    };
    let short = ThreadMap::record(&gpu, Pattern::OnePerThread, (1, 1000), (3, 1), (256, 1)).unwrap();
    assert_eq!(short.unwritten(), 1000 - 768);
    let stride = ThreadMap::record(&gpu, Pattern::GridStride, (1, 1000), (2, 1), (128, 1)).unwrap();
    assert_eq!(stride.unwritten(), 0);
    // Element 256 is the second lap: block 0, thread 0 again.
    assert_eq!(stride.owner(0, 256), Some(Owner { block: (0, 0), thread: (0, 0) }));
    let matrix = ThreadMap::record(&gpu, Pattern::Matrix2d, (20, 40), (3, 3), (16, 8)).unwrap();
    assert_eq!(matrix.owner(19, 39), Some(Owner { block: (2, 2), thread: (7, 3) }));
}

#[test]
fn bandwidth_points_come_from_the_trace_of_real_copies() {
    let Some(gpu) = device_or_skip("bandwidth_points_come_from_the_trace_of_real_copies") else {
        return;
    };
    let points = viz::measure_bandwidth(&gpu, &[4096, 1 << 20], 2).unwrap();
    // Two sizes × two directions × pinned or not.
    assert_eq!(points.len(), 8);
    let big_pinned = points.iter().find(|p| p.bytes == 1 << 20 && p.pinned && p.dir == CopyDir::HostToDevice).unwrap();
    let small_pinned = points.iter().find(|p| p.bytes == 4096 && p.pinned && p.dir == CopyDir::HostToDevice).unwrap();
    assert!(big_pinned.gb_per_s() > small_pinned.gb_per_s(), "{big_pinned:?} vs {small_pinned:?}");
}

#[test]
fn the_overlap_demo_uses_every_stream() {
    let Some(gpu) = device_or_skip("the_overlap_demo_uses_every_stream") else {
        return;
    };
    let trace = viz::overlap_demo(&gpu, 3, 6, 1 << 16).unwrap();
    let streams: std::collections::BTreeSet<u32> = trace.launches().map(|o| o.stream).collect();
    assert_eq!(streams.len(), 3);
    assert_eq!(trace.launches().count(), 6);
    assert_eq!(trace.copies().count(), 18);
    let svg = viz::timeline_svg(&trace, "overlap");
    assert!(svg.as_str().contains("stream") && svg.as_str().contains("kernel"));
}
