//! Occupancy: how many blocks of a kernel one streaming multiprocessor (SM) holds at once. A
//! block takes warp slots, a block slot, registers and shared memory; whichever runs out first
//! decides. The limits are the device's (`DeviceInfo::sm`: the driver's attributes on a GPU,
//! compute capability 8.0's on the emulator); the allocation units are those of the CUDA
//! occupancy calculator (`cuda_occupancy.h`) for compute capability 8.0 and 9.0.
//!
//! `Function::max_active_blocks_per_sm` asks the driver on a GPU
//! (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) and computes it here on the emulator.

/// What one SM holds at once: the limits an occupancy calculation divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SmLimits {
    /// Threads resident at once (2048 on an H200: 64 warps).
    pub max_threads: u32,
    /// Blocks resident at once (32).
    pub max_blocks: u32,
    /// Threads in one block (1024).
    pub max_threads_per_block: u32,
    pub warp_size: u32,
    /// 32-bit registers in the SM's register file (65,536).
    pub registers: u32,
    /// Registers one block may hold (65,536).
    pub max_registers_per_block: u32,
    /// Registers one thread may use (255).
    pub max_registers_per_thread: u32,
    /// A warp's registers are allocated in multiples of this (256: 8 per thread).
    pub register_allocation_unit: u32,
    /// The register file is split into this many equal parts, each serving its own warps (4).
    pub register_file_partitions: u32,
    /// Shared memory of the SM (228 KiB on an H200), shared by its blocks.
    pub shared_memory: u32,
    /// Shared memory one block may use, opting in (227 KiB on an H200).
    pub max_shared_memory_per_block: u32,
    /// Shared memory the system keeps for each resident block (1 KiB).
    pub reserved_shared_memory_per_block: u32,
    /// A block's shared memory is allocated in multiples of this (128 bytes).
    pub shared_memory_allocation_unit: u32,
}

impl SmLimits {
    /// An H200's (compute capability 9.0), as its driver reports them.
    pub const H200: SmLimits = SmLimits {
        max_threads: 2048,
        max_blocks: 32,
        max_threads_per_block: 1024,
        warp_size: 32,
        registers: 65536,
        max_registers_per_block: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        register_file_partitions: 4,
        shared_memory: 228 << 10,
        max_shared_memory_per_block: 227 << 10,
        reserved_shared_memory_per_block: 1024,
        shared_memory_allocation_unit: 128,
    };

    /// An A100's (compute capability 8.0), which the emulator imitates.
    pub const A100: SmLimits = SmLimits { shared_memory: 164 << 10, max_shared_memory_per_block: 163 << 10, ..SmLimits::H200 };

    /// Warps resident at once.
    pub fn max_warps(&self) -> u32 {
        self.max_threads / self.warp_size.max(1)
    }
}

/// What one block of a kernel asks of an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BlockResources {
    pub threads: u32,
    /// Registers per thread, as the compiler allocated them (`Function::resources`).
    pub registers_per_thread: u32,
    /// Shared memory per block: the kernel's static `__shared__` arrays plus the launch's dynamic
    /// shared memory.
    pub shared_bytes: u32,
}

/// What a compiled kernel uses, as the driver reports it (`cuFuncGetAttribute`). The emulator
/// allocates no registers and sizes static shared memory only when a block runs, so it reports
/// neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FunctionResources {
    pub registers_per_thread: Option<u32>,
    pub static_shared_bytes: Option<u32>,
    /// Local memory per thread (registers spilled, arrays indexed at run time).
    pub local_bytes_per_thread: Option<u32>,
    /// The largest block this kernel can be launched with (below 1024 when it uses many registers).
    pub max_threads_per_block: u32,
}

/// Each limit's answer, in blocks per SM; the SM holds the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLimits {
    pub warps: u32,
    pub blocks: u32,
    pub registers: u32,
    pub shared: u32,
}

impl BlockLimits {
    pub fn resident(&self) -> u32 {
        self.warps.min(self.blocks).min(self.registers).min(self.shared)
    }
}

/// The occupancy calculation (the driver's, as `cuda_occupancy.h` documents it), as reference
/// code: chapter 5's exercise is to write it, so a grader refuses an answer that calls this. A
/// block that cannot be launched at all (too many threads, registers or shared memory) gets 0.
pub fn block_limits(sm: &SmLimits, b: &BlockResources) -> BlockLimits {
    crate::reference::called("gpubook::gpu::block_limits");
    limits(sm, b)
}

/// [`block_limits`], for the emulator's own occupancy answers (not reference code there).
pub(crate) fn limits(sm: &SmLimits, b: &BlockResources) -> BlockLimits {
    let round_up = |x: u32, unit: u32| x.div_ceil(unit.max(1)) * unit.max(1);
    let none = BlockLimits { warps: 0, blocks: 0, registers: 0, shared: 0 };
    if b.threads == 0 || b.threads > sm.max_threads_per_block {
        return none;
    }
    let warps = b.threads.div_ceil(sm.warp_size);
    let registers = if b.registers_per_thread == 0 {
        u32::MAX
    } else {
        let per_warp = round_up(b.registers_per_thread * sm.warp_size, sm.register_allocation_unit);
        // The hardware checks a block against the per-block limit as if its warps were spread
        // over every partition of the register file.
        let checked = per_warp as u64 * round_up(warps, sm.register_file_partitions) as u64;
        if b.registers_per_thread > sm.max_registers_per_thread || checked > sm.max_registers_per_block as u64 {
            0
        } else {
            // Each partition holds whole warps.
            let partitions = sm.register_file_partitions.max(1);
            (sm.registers / partitions / per_warp) * partitions / warps
        }
    };
    let allocated = round_up(b.shared_bytes, sm.shared_memory_allocation_unit);
    let shared = if allocated > sm.max_shared_memory_per_block {
        0
    } else {
        sm.shared_memory.checked_div(allocated + sm.reserved_shared_memory_per_block).unwrap_or(u32::MAX)
    };
    BlockLimits { warps: sm.max_warps() / warps, blocks: sm.max_blocks, registers, shared }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(sm: &SmLimits, threads: u32, registers_per_thread: u32, shared_bytes: u32) -> u32 {
        block_limits(sm, &BlockResources { threads, registers_per_thread, shared_bytes }).resident()
    }

    #[test]
    fn each_limit_binds_in_its_turn() {
        let h = SmLimits::H200;
        assert_eq!(blocks(&h, 256, 32, 0), 8, "warps: 64 / 8");
        assert_eq!(blocks(&h, 32, 16, 0), 32, "block slots");
        assert_eq!(blocks(&h, 256, 64, 0), 4, "registers: 64 per thread is 2048 per warp, 8 warps a partition");
        assert_eq!(blocks(&h, 128, 0, 48 << 10), 4, "shared: 228 KiB / 49 KiB");
        assert_eq!(blocks(&h, 1024, 64, 0), 1);
        assert_eq!(blocks(&h, 1024, 65, 0), 0, "72 registers a thread after rounding: 73,728 > 65,536");
        assert_eq!(blocks(&h, 1025, 0, 0), 0);
        assert_eq!(blocks(&h, 64, 0, 228 << 10), 0, "more than a block may have");
    }

    #[test]
    fn registers_are_allocated_per_partition() {
        // 40 registers: 1280 a warp; 16,384 / 1280 = 12 warps a partition, 48 an SM (not 51).
        assert_eq!(blocks(&SmLimits::H200, 96, 40, 0), 16);
        // 33 registers round up to 40.
        assert_eq!(blocks(&SmLimits::H200, 96, 33, 0), 16);
    }

    #[test]
    fn shared_memory_is_rounded_and_reserved() {
        // 7 KiB + 1 KiB reserved: 28 blocks, not 32; 1 byte rounds up to 128.
        assert_eq!(blocks(&SmLimits::H200, 32, 0, 7 << 10), 28);
        assert_eq!(blocks(&SmLimits::A100, 32, 0, (82 << 10) - 1), 1, "164 KiB holds two blocks of 81 KiB, not 82");
        assert_eq!(blocks(&SmLimits::A100, 32, 0, 81 << 10), 2);
    }
}
