//! The expert-parallel runtime: symmetric buffers stored through from peers, barriers, the world
//! spread over several device slots, and a whole MoE layer against the host's dense one.

use gpubook::ep::{Link, Symmetric, Topology, World};
use gpubook::gpu::{Gpu, LaunchConfig, Source};
use gpubook::testing::{device_or_skip, root};
use gpubook_labs::ep::moe::{self, MoeConfig};

fn all_gather(world: &World) -> Vec<Vec<i32>> {
    let n = world.size();
    let buf = Symmetric::<i32>::zeros(world, n, "buf").unwrap();
    let f = world.rank(0).gpu().load_module(Source::file(root().join("crates/gpubook/tests/kernels/ep_world.cu"))).unwrap();
    let f = f.load_function("all_gather_rank").unwrap();
    world.barrier().unwrap();
    for r in 0..n {
        let (ranks, rank) = (n as i32, r as i32);
        let mut l = world.rank(r).stream().launch_builder(&f);
        l.arg(buf.peers(r)).arg(&ranks).arg(&rank);
        // SAFETY: every rank's buf holds n ints and its table n peer pointers; the kernel's
        // d < ranks guard keeps the 32 threads inside them.
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    }
    world.barrier().unwrap();
    buf.to_host(world).unwrap()
}

fn expected(n: usize) -> Vec<Vec<i32>> {
    (0..n).map(|d| (0..n).map(|r| (r * 10 + d) as i32).collect()).collect()
}

#[test]
fn stores_into_peer_buffers_land_on_one_device() {
    let Some(gpu) = device_or_skip("stores_into_peer_buffers_land_on_one_device") else { return };
    let world = World::new(&gpu, Topology::new(2, 3).unwrap()).unwrap();
    assert_eq!(all_gather(&world), expected(6));
    assert_eq!(world.barriers(), 2);
}

#[test]
fn ranks_spread_over_device_slots() {
    let Some(gpu) = device_or_skip("ranks_spread_over_device_slots") else { return };
    // Two slots on one device: the several-device path (per-slot barrier streams, host waits
    // between slots) with memory that is one, as peers' is after cuCtxEnablePeerAccess.
    let world = World::spread(&[gpu.clone(), gpu.clone()], Topology::new(1, 5).unwrap()).unwrap();
    assert_eq!(all_gather(&world), expected(5));
    let slots: Vec<usize> = world.devices().map(|_| 1).collect();
    assert_eq!(slots.len(), 2);
    let t = world.timeline().unwrap();
    assert_eq!(t.phases.len(), 1, "one phase with kernels: {:?}", t.phases.iter().map(|p| &p.label).collect::<Vec<_>>());
    assert!(t.phases[0].ranks.iter().all(|r| r.kernels.len() == 1));
}

#[test]
fn the_emulators_devices_cannot_hold_one_world() {
    if Gpu::device_count().unwrap_or(0) < 2 {
        return;
    }
    let (Ok(a), Ok(b)) = (Gpu::with_ordinal(0), Gpu::with_ordinal(1)) else { return };
    if a.backend() != gpubook::gpu::BackendKind::Emulator {
        return;
    }
    let err = World::spread(&[a, b], Topology::new(1, 2).unwrap()).err().expect("refused");
    assert!(err.to_string().contains("own memory"), "{err}");
}

fn run(cfg: MoeConfig) -> moe::MoeRun {
    // The layer is reference code: run from a plain test thread while another test grades an
    // answer, its calls would count against that answer.
    gpubook::reference::grader_thread();
    let gpu = Gpu::new().unwrap();
    moe::run(&gpu, &cfg).unwrap()
}

#[test]
fn a_moe_layer_inside_one_node_matches_the_dense_one() {
    if device_or_skip("a_moe_layer_inside_one_node_matches_the_dense_one").is_none() {
        return;
    }
    let cfg = MoeConfig { nodes: 1, gpus_per_node: 3, tokens: 37, hidden: 20, experts: 9, topk: 3, limit_nodes: 1, channels: 4, seed: 7 };
    let r = run(cfg);
    assert!(r.max_rel_error <= 1e-4, "error {}", r.max_rel_error);
    assert_eq!(r.routing_agreement.1, 3 * 37);
    let dispatch = &r.traffic.iter().find(|(n, _)| n == "dispatch").unwrap().1;
    assert_eq!(dispatch.bytes(Link::Ib), 0, "one node: no IB");
    assert!(dispatch.bytes(Link::NvLink) > 0);
    assert!(r.timeline.phases.iter().any(|p| p.label.contains("dispatch")));
}

#[test]
fn a_moe_layer_across_nodes_takes_the_two_hop_path() {
    if device_or_skip("a_moe_layer_across_nodes_takes_the_two_hop_path").is_none() {
        return;
    }
    let cfg = MoeConfig { nodes: 3, gpus_per_node: 2, tokens: 29, hidden: 12, experts: 12, topk: 4, limit_nodes: 2, channels: 3, seed: 11 };
    let r = run(cfg);
    assert!(r.max_rel_error <= 1e-4, "error {}", r.max_rel_error);
    assert!(r.ib_messages <= r.ib_messages_per_rank && r.ib_messages_per_rank <= r.ib_messages_per_expert);
    assert!(r.ib_messages > 0);
    let rdma = &r.traffic.iter().find(|(n, _)| n == "dispatch_rdma").unwrap().1;
    assert_eq!(rdma.bytes(Link::NvLink), 0, "the first hop only crosses nodes (or stays home)");
    let fwd = &r.traffic.iter().find(|(n, _)| n == "dispatch_forward").unwrap().1;
    assert_eq!(fwd.bytes(Link::Ib), 0, "the second hop stays inside the node");
}

#[test]
fn the_channel_sweep_runs_chapter_14s_solution_and_checks_every_row() {
    use gpubook_labs::channels::{SweepConfig, channel_sweep};
    let Some(gpu) = device_or_skip("the_channel_sweep_runs_chapter_14s_solution_and_checks_every_row") else { return };
    let cfg = SweepConfig::for_device(&gpu);
    let rows = channel_sweep(&gpu, &cfg, &[1, 2]).unwrap();
    assert_eq!(rows.iter().map(|r| r.channels).collect::<Vec<_>>(), [1, 2]);
    assert!(rows.iter().all(|r| r.ms > 0.0 && r.bytes > 0), "{:?}", rows.iter().map(|r| r.ms).collect::<Vec<_>>());
}
