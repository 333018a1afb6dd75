//! What a device is: the facts `gpubook` and `gpubook doctor` print and launch checks use (the
//! limits' values come from the table in limits.rs).

use super::error::GpuError;
use super::occupancy::SmLimits;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BackendKind {
    Cuda,
    Emulator,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Emulator => "emulator",
        })
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceInfo {
    pub backend: BackendKind,
    pub ordinal: usize,
    pub name: String,
    /// (major, minor); the emulator reports the compute capability it imitates.
    pub compute_capability: (i32, i32),
    pub multiprocessors: u32,
    pub total_memory: u64,
    pub max_threads_per_block: u32,
    pub max_block_dim: [u32; 3],
    pub max_grid_dim: [u32; 3],
    /// Static + dynamic shared memory a block may use without opting in.
    pub max_shared_mem_per_block: u32,
    /// Dynamic shared memory a block may use after opting in (`cudaFuncSetAttribute`): 227 KiB
    /// on an H200; on the emulator the same as without.
    pub max_shared_mem_per_block_optin: u32,
    pub warp_size: u32,
    /// What one SM holds at once (threads, blocks, registers, shared memory): the limits of an
    /// occupancy calculation.
    pub sm: SmLimits,
    /// Driver version as CUDA encodes it (13000 = 13.0); `None` on the emulator.
    pub driver_version: Option<i32>,
    /// NVRTC (major, minor); `None` on the emulator.
    pub nvrtc_version: Option<(i32, i32)>,
    /// A line about the backend: the compiler the emulator uses, and so on.
    pub detail: String,
}

impl DeviceInfo {
    /// Dynamic shared memory that keeps a block alone on its SM: two blocks of it (each with the
    /// SM's reservation) do not fit in one SM's shared memory, so a kernel launched with it takes
    /// whole SMs, one block each, and no other kernel's block launched with it fits beside one.
    /// This is how a communication kernel holds k SMs for itself while a computation launched the
    /// same way fills the rest (DeepEP's kernels and DeepGEMM split an H800's 132 SMs so). The
    /// block need not use the memory. Opt the kernel in first
    /// ([`Function::set_max_dynamic_shared_bytes`](super::Function::set_max_dynamic_shared_bytes)).
    pub fn whole_sm_shared_bytes(&self) -> Result<u32, GpuError> {
        let sm = self.sm;
        let unit = sm.shared_memory_allocation_unit.max(1);
        let half = (sm.shared_memory / 2).saturating_sub(sm.reserved_shared_memory_per_block) + 1;
        let bytes = half.div_ceil(unit) * unit;
        let most = self.max_shared_mem_per_block_optin.min(sm.max_shared_memory_per_block);
        if bytes > most {
            return Err(GpuError::Size(format!(
                "a block needs {bytes} bytes of shared memory to hold an SM of {} alone; this device gives a block at most {most}",
                sm.shared_memory
            )));
        }
        Ok(bytes)
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = self.total_memory as f64 / (1u64 << 30) as f64;
        writeln!(f, "backend   {}", self.backend)?;
        writeln!(f, "device    {} (ordinal {})", self.name, self.ordinal)?;
        writeln!(
            f,
            "compute   capability {}.{}, {} SMs, warp {}",
            self.compute_capability.0, self.compute_capability.1, self.multiprocessors, self.warp_size
        )?;
        writeln!(f, "memory    {gib:.1} GiB")?;
        writeln!(
            f,
            "limits    {} threads/block, {} KiB shared/block ({} KiB opting in)",
            self.max_threads_per_block,
            self.max_shared_mem_per_block / 1024,
            self.max_shared_mem_per_block_optin / 1024
        )?;
        let sm = &self.sm;
        writeln!(
            f,
            "per SM    {} threads, {} blocks, {} registers, {} KiB shared",
            sm.max_threads,
            sm.max_blocks,
            sm.registers,
            sm.shared_memory / 1024
        )?;
        if let Some(v) = self.driver_version {
            writeln!(f, "driver    CUDA {}.{}", v / 1000, (v % 1000) / 10)?;
        }
        if let Some((a, b)) = self.nvrtc_version {
            writeln!(f, "nvrtc     {a}.{b}")?;
        }
        if !self.detail.is_empty() {
            writeln!(f, "detail    {}", self.detail)?;
        }
        Ok(())
    }
}
