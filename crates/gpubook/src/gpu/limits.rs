//! What a GPU refuses at launch, in one table, and the check of a configuration against it.
//!
//! Both backends report these limits in their `DeviceInfo`, and `LaunchArgs::launch` checks every
//! launch against them above the backend seam, so a bad launch is the same clear error on a GPU
//! and on the emulator. (The emulator's worker process keeps its own guard, as any process that
//! takes requests must; it is never the one a learner meets.)

use super::error::{GpuError, Result};
use super::info::DeviceInfo;

/// Threads in one block, on every CUDA GPU since compute capability 2.0.
pub(crate) const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Threads along each axis of a block.
pub(crate) const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
/// Blocks along each axis of a grid (x up to 2^31 - 1 since compute capability 3.0).
pub(crate) const MAX_GRID_DIM: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// Shared memory a block may use, static and dynamic together, without opting in. A kernel's
/// static `__shared__` arrays can never exceed it; dynamic shared memory may go up to the device's
/// `max_shared_mem_per_block_optin` (227 KiB on an H200) after
/// `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`.
pub(crate) const SHARED_MEM_PER_BLOCK: u32 = 48 << 10;

impl DeviceInfo {
    /// The table's (max block dims, max grid dims, max threads per block), which every CUDA GPU
    /// since compute capability 3.0 shares and the emulator enforces too.
    pub fn cuda_limits() -> ([u32; 3], [u32; 3], u32) {
        (MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK)
    }
}

/// Grid and block shape of a launch (CUDA's `<<<grid, block, shared>>>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid_dim: (u32, u32, u32),
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes (`extern __shared__`).
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element, 1024 threads a block (as cudarc's `for_num_elems`).
    pub fn for_num_elems(n: u32) -> Self {
        LaunchConfig { grid_dim: (n.div_ceil(1024).max(1), 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }
    }

    pub fn threads_per_block(&self) -> u64 {
        self.block_dim.0 as u64 * self.block_dim.1 as u64 * self.block_dim.2 as u64
    }

    pub fn blocks(&self) -> u64 {
        self.grid_dim.0 as u64 * self.grid_dim.1 as u64 * self.grid_dim.2 as u64
    }
}

/// The limits a GPU enforces at launch (`cudaErrorInvalidConfiguration` and friends).
pub(crate) fn check_config(info: &DeviceInfo, kernel: &str, cfg: &LaunchConfig) -> Result<()> {
    let err = |message: String| Err(GpuError::LaunchConfig { kernel: kernel.into(), message });
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    if [g.0, g.1, g.2, b.0, b.1, b.2].contains(&0) {
        return err(format!(
            "grid_dim {g:?} and block_dim {b:?} must have no zero dimension (an empty launch is an error on a GPU: did n.div_ceil(block) give 0?)"
        ));
    }
    if cfg.threads_per_block() > info.max_threads_per_block as u64 {
        return err(format!(
            "block_dim {b:?} has {} threads; a block holds at most {}",
            cfg.threads_per_block(),
            info.max_threads_per_block
        ));
    }
    let (mb, mg) = (info.max_block_dim, info.max_grid_dim);
    if b.0 > mb[0] || b.1 > mb[1] || b.2 > mb[2] {
        return err(format!("block_dim {b:?} exceeds the per-dimension limits {mb:?}"));
    }
    if g.0 > mg[0] || g.1 > mg[1] || g.2 > mg[2] {
        return err(format!("grid_dim {g:?} exceeds the per-dimension limits {mg:?}"));
    }
    if cfg.shared_mem_bytes > info.max_shared_mem_per_block {
        let (asked, plain, optin) = (cfg.shared_mem_bytes, info.max_shared_mem_per_block, info.max_shared_mem_per_block_optin);
        let beyond = if optin > plain && asked <= optin {
            format!(
                " ({} can give up to {optin} after cudaFuncSetAttribute(.., cudaFuncAttributeMaxDynamicSharedMemorySize, ..), \
                 which gpubook's API does not offer)",
                info.name
            )
        } else if optin > plain {
            format!(", and {} gives a block at most {optin} even with opting in", info.name)
        } else {
            String::new()
        };
        return err(format!("{asked} bytes of dynamic shared memory requested; a block may use at most {plain} without opting in{beyond}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::BackendKind;

    fn h200() -> DeviceInfo {
        DeviceInfo {
            backend: BackendKind::Cuda,
            ordinal: 0,
            name: "NVIDIA H200".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            total_memory: 141 << 30,
            max_threads_per_block: MAX_THREADS_PER_BLOCK,
            max_block_dim: MAX_BLOCK_DIM,
            max_grid_dim: MAX_GRID_DIM,
            max_shared_mem_per_block: SHARED_MEM_PER_BLOCK,
            max_shared_mem_per_block_optin: 227 << 10,
            warp_size: 32,
            sm: crate::gpu::SmLimits::H200,
            driver_version: Some(13000),
            nvrtc_version: Some((13, 0)),
            detail: String::new(),
        }
    }

    fn check(grid: (u32, u32, u32), block: (u32, u32, u32), shared: u32) -> std::result::Result<(), String> {
        let cfg = LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: shared };
        check_config(&h200(), "k", &cfg).map_err(|e| e.to_string())
    }

    #[test]
    fn launches_inside_the_limits_pass() {
        assert_eq!(check((4, 1, 1), (256, 1, 1), 0), Ok(()));
        assert_eq!(check((i32::MAX as u32, 65535, 65535), (1024, 1, 1), 48 << 10), Ok(()));
        assert_eq!(check((1, 1, 1), (1, 1, 64), 0), Ok(()));
    }

    #[test]
    fn each_limit_is_an_error_that_names_it() {
        let e = check((4, 1, 1), (32, 64, 1), 0).unwrap_err();
        assert!(e.contains("(32, 64, 1) has 2048 threads; a block holds at most 1024"), "{e}");
        let e = check((0, 1, 1), (1, 1, 1), 0).unwrap_err();
        assert!(e.contains("no zero dimension"), "{e}");
        let e = check((1, 70000, 1), (1, 1, 1), 0).unwrap_err();
        assert!(e.contains("grid_dim (1, 70000, 1) exceeds the per-dimension limits [2147483647, 65535, 65535]"), "{e}");
        let e = check((1, 1, 1), (1, 1, 128), 0).unwrap_err();
        assert!(e.contains("block_dim (1, 1, 128) exceeds"), "{e}");
    }

    #[test]
    fn dynamic_shared_memory_past_48_kib_names_the_opt_in() {
        let e = check((1, 1, 1), (32, 1, 1), 64 << 10).unwrap_err();
        assert!(e.contains("65536 bytes of dynamic shared memory requested; a block may use at most 49152 without opting in"), "{e}");
        assert!(e.contains("NVIDIA H200 can give up to 232448 after cudaFuncSetAttribute"), "{e}");
        let e = check((1, 1, 1), (32, 1, 1), 228 << 10).unwrap_err();
        assert!(e.contains("gives a block at most 232448 even with opting in"), "{e}");
    }
}
