//! The chunk pair with its communication as a kernel on SMs of its own (`gpubook overlap --comm
//! kernel`, chapter 14): it computes the right values and its figures add up. On the emulator
//! the times are its model's; on a GPU they are measured.

use gpubook::gpu::OpKind;
use gpubook::testing::device_or_skip;
use gpubook_labs::chunk_pair::{Comm, PairConfig, Plan, comm_sweep, comm_sweep_table, measure};

#[test]
fn a_block_with_the_whole_sm_shared_bytes_holds_its_sm_alone() {
    let Some(gpu) = device_or_skip("a_block_with_the_whole_sm_shared_bytes_holds_its_sm_alone") else {
        return;
    };
    let sm = gpu.info().sm;
    let bytes = gpu.info().whole_sm_shared_bytes().unwrap();
    let taken = bytes + sm.reserved_shared_memory_per_block;
    assert!(taken <= sm.shared_memory, "one block fits: {taken} of {}", sm.shared_memory);
    assert!(2 * taken > sm.shared_memory, "two do not: {} of {}", 2 * taken, sm.shared_memory);
}

#[test]
fn the_pair_with_a_communication_kernel_computes_the_right_values_on_its_sms() {
    let Some(gpu) = device_or_skip("the_pair_with_a_communication_kernel_computes_the_right_values_on_its_sms") else {
        return;
    };
    // Reference code runs here: a grader tested beside this one must not take it for its answer's.
    gpubook::reference::grader_thread();
    let all = gpu.info().multiprocessors;
    let comm = Comm::kernel(&gpu, 2).unwrap();
    assert_eq!(comm, Comm::Kernel { sms: 2, compute_sms: all - 2 });
    let config = PairConfig { rounds: 1, blocks_per_sm: None, comm };
    // `measure` checks the pair's outputs against the CPU; it fails on a wrong value.
    let run = measure(&gpu, Plan::DualPipe, 4096, config, 1).unwrap();
    assert_eq!((run.overlap.launches, run.overlap.copies), (4, 4), "four computations and four communications");
    let mut comm_kernels = 0;
    for op in &run.trace.ops {
        if let OpKind::Launch { kernel, grid, block, shared_mem_bytes, .. } = &op.kind {
            let want_grid = if kernel == "comm_copy" { 2 } else { all - 2 };
            assert_eq!(grid[0], want_grid, "{kernel}'s blocks");
            assert_eq!(*shared_mem_bytes, gpu.info().whole_sm_shared_bytes().unwrap(), "{kernel} holds whole SMs");
            assert_eq!(block[0], 1024);
            comm_kernels += usize::from(kernel == "comm_copy");
        }
        assert!(!matches!(op.kind, OpKind::Copy { .. }), "no copies: the kernel communicates ({:?})", op.kind);
    }
    assert_eq!(comm_kernels, 4);
}

#[test]
fn the_sweep_over_the_communication_sms_adds_up() {
    let Some(gpu) = device_or_skip("the_sweep_over_the_communication_sms_adds_up") else {
        return;
    };
    // Reference code runs here: a grader tested beside this one must not take it for its answer's.
    gpubook::reference::grader_thread();
    let rows = comm_sweep(&gpu, 4096, 1, &[1, 3], 1).unwrap();
    let comms: Vec<Comm> = rows.iter().map(|r| r.comm).collect();
    let all = gpu.info().multiprocessors;
    assert_eq!(comms, [Comm::Copies, Comm::Kernel { sms: 1, compute_sms: all - 1 }, Comm::Kernel { sms: 3, compute_sms: all - 3 }]);
    for r in &rows {
        assert!((0.0..=1.0).contains(&r.hidden), "{r:?}");
        assert!(r.compute_alone_us > 0.0 && r.comm_alone_us > 0.0 && r.compute_in_pair_us > 0.0, "{r:?}");
        // The pair computes as long as its computations take, and no longer than they and
        // its communications one after the other (plus the gaps where a stream waits).
        assert!(r.pair_us >= r.compute_in_pair_us, "{r:?}");
        let exposed = r.pair_us - r.compute_in_pair_us;
        let hidden = (1.0 - exposed / r.comm_alone_us).clamp(0.0, 1.0);
        assert!((hidden - r.hidden).abs() < 1e-9, "hidden is 1 - exposed / communication alone: {r:?}");
    }
    // The kernel rows share one baseline: the computation alone on every SM.
    assert_eq!(rows[1].compute_alone_us, rows[2].compute_alone_us);
    let table = comm_sweep_table(&rows);
    assert_eq!(table.lines().count(), 2 + rows.len(), "{table}");
    assert!(table.contains("| kernel on 3 SMs |"), "{table}");
    // Bad input is an error, not a launch.
    assert!(Comm::kernel(&gpu, 0).is_err());
    assert!(Comm::kernel(&gpu, all).is_err());
    let odd = PairConfig { rounds: 1, blocks_per_sm: None, comm: Comm::kernel(&gpu, 1).unwrap() };
    let e = measure(&gpu, Plan::DualPipe, 4097, odd, 1).err().expect("4097 floats are not float4s");
    assert!(format!("{e:#}").contains("multiple of 4"), "{e:#}");
}
