//! The demo kernels chapter 4 shows (kernels/demos/shared_memory.cu) do what the chapter says.
//! Without a device each test prints SKIPPED.

use gpubook::gpu::{BackendKind, Gpu, GpuError, LaunchConfig, Module, Source};
use gpubook::testing::{device_or_skip, root};

fn demos(gpu: &Gpu) -> Module {
    gpu.load_module(Source::file(root().join("kernels/demos/shared_memory.cu"))).expect("kernels/demos/shared_memory.cu compiles")
}

fn cfg(grid: (u32, u32), block: (u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid.0, grid.1, 1), block_dim: (block.0, block.1, 1), shared_mem_bytes: 0 }
}

fn reverse(gpu: &Gpu, kernel: &str, data: &[f32], block: u32) -> Result<Vec<f32>, GpuError> {
    let f = demos(gpu).load_function(kernel)?;
    let stream = gpu.default_stream();
    let mut d = stream.clone_htod(data)?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut d);
    // SAFETY: d holds whole blocks of `block` (≤ 1024) floats, one per thread, which fit
    // the kernel's 1024-float shared array; the racy twin runs on the emulator only.
    unsafe { launch.launch(cfg((data.len() as u32 / block, 1), (block, 1))) }?;
    stream.clone_dtoh(&d)
}

#[test]
fn reverse_blocks_reverses_each_block() {
    let Some(gpu) = device_or_skip("reverse_blocks_reverses_each_block") else { return };
    let data: Vec<f32> = (0..512).map(|i| i as f32).collect();
    let got = reverse(&gpu, "reverse_blocks", &data, 128).unwrap();
    let want: Vec<f32> = data.chunks(128).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(got, want);
}

#[test]
fn reverse_without_the_barrier_is_a_race_on_the_emulator() {
    let Some(gpu) = device_or_skip("reverse_without_the_barrier_is_a_race_on_the_emulator") else { return };
    if gpu.backend() != BackendKind::Emulator {
        println!("SKIPPED reverse_without_the_barrier_is_a_race_on_the_emulator: only the emulator detects races");
        return;
    }
    let data: Vec<f32> = (0..256).map(|i| i as f32).collect();
    match reverse(&gpu, "reverse_blocks_racy", &data, 256) {
        Err(e @ GpuError::Kernel(_)) => {
            println!("{e}");
            assert!(e.to_string().starts_with("data race"), "{e}");
        }
        other => panic!("expected a data race, got {other:?}"),
    }
}

#[test]
fn naive_matmul_and_naive_transpose_compute_what_they_say() {
    let Some(gpu) = device_or_skip("naive_matmul_and_naive_transpose_compute_what_they_say") else { return };
    let module = demos(&gpu);
    let stream = gpu.default_stream();
    let (m, k, n) = (19usize, 7usize, 23usize);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 3) as f32).collect();
    let (a_d, b_d) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
    let mut c_d = stream.alloc_zeros::<f32>(m * n).unwrap();
    let f = module.load_function("naive_matmul").unwrap();
    let (m_i, k_i, n_i) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&m_i).arg(&k_i).arg(&n_i);
    // SAFETY: a, b and c hold m × k, k × n and m × n floats and the row < m && col < n
    // guard keeps every thread inside them.
    unsafe { launch.launch(cfg(((n as u32).div_ceil(16), (m as u32).div_ceil(16)), (16, 16))) }.unwrap();
    let c = stream.clone_dtoh(&c_d).unwrap();
    for (r, c_row) in c.chunks(n).enumerate() {
        for (col, &got) in c_row.iter().enumerate() {
            let want: f32 = (0..k).map(|j| a[r * k + j] * b[j * n + col]).sum();
            assert_eq!(got, want, "c[{r}][{col}]");
        }
    }

    // The transpose of A (m × k) is k × m.
    let mut t_d = stream.alloc_zeros::<f32>(m * k).unwrap();
    let f = module.load_function("naive_transpose").unwrap();
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&mut t_d).arg(&m_i).arg(&k_i);
    // SAFETY: a_d and t_d hold m × k floats and the row < m && col < k guard keeps every
    // thread inside them.
    unsafe { launch.launch(cfg(((k as u32).div_ceil(16), (m as u32).div_ceil(16)), (16, 16))) }.unwrap();
    let t = stream.clone_dtoh(&t_d).unwrap();
    for r in 0..m {
        for c in 0..k {
            assert_eq!(t[c * m + r], a[r * k + c], "t[{c}][{r}]");
        }
    }
}

#[test]
fn shuffle_down_takes_the_value_delta_lanes_up() {
    let Some(gpu) = device_or_skip("shuffle_down_takes_the_value_delta_lanes_up") else { return };
    let f = demos(&gpu).load_function("shuffle_down").unwrap();
    let stream = gpu.default_stream();
    let input: Vec<i32> = (0..64).map(|i| 100 + i).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out_d = stream.alloc_zeros::<i32>(64).unwrap();
    let delta = 4i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out_d).arg(&delta);
    // SAFETY: in_d and out_d hold 64 ints, one per thread of the one block of two whole
    // warps, so the full shuffle mask is right.
    unsafe { launch.launch(cfg((1, 1), (64, 1))) }.unwrap();
    let out = stream.clone_dtoh(&out_d).unwrap();
    for (i, &got) in out.iter().enumerate() {
        let lane = i % 32;
        let want = if lane + 4 < 32 { input[i + 4] } else { input[i] };
        assert_eq!(got, want, "lane {lane} of warp {}", i / 32);
    }
}
