// The boundary between compiled kernels and the worker runtime.
//
// Both sides include this file: the device header (gpubook_device.h) reads the current
// CUDA thread's coordinates from `gpubook_current_coords` and calls the gpubook_rt_*
// functions; the worker defines them. Plain C types only, and no CUDA builtin names
// (threadIdx, blockIdx ...): the device header defines those as macros.
#ifndef GPUBOOK_ABI_H
#define GPUBOOK_ABI_H

#include <stddef.h>
#include <stdint.h>

struct gpubook_dim3 {
    unsigned x, y, z;
};

// The running CUDA thread's coordinates (gpubook_current_coords), which the device header
// reads: fast mode's threadIdx is one thread-local load, and in a block loop the compiler sees the
// value the loop just stored. The worker copies them in whenever it switches CUDA threads.
struct gpubook_coords {
    gpubook_dim3 thread_idx;
    gpubook_dim3 block_idx;
    gpubook_dim3 block_dim;
    gpubook_dim3 grid_dim;
};

// Fast mode (and check mode with its compiler pass) runs a block's threads as a plain loop inside
// the kernel module (`__gpubook_kloop_NAME`, kernel_export.h): no fiber, no call into the worker
// per thread. The
// loop runs threads next, next + 1, ... while < end, keeping gpubook_current_coords.thread_idx
// (the worker has set the block's part). A thread that calls into the worker for something that
// needs the scheduler (a barrier, a warp function) ends the loop: the worker finds it from its
// coordinates, sets `end` to the thread after it and takes over from there (scheduler.cpp).
struct gpubook_block_loop {
    unsigned next;
    unsigned end;
};

// gpubook_rt_coord's `which`: threadIdx.x, .y, .z, then blockIdx, blockDim, gridDim.
enum gpubook_coord {
    GPUBOOK_THREAD_IDX = 0,
    GPUBOOK_BLOCK_IDX = 3,
    GPUBOOK_BLOCK_DIM = 6,
    GPUBOOK_GRID_DIM = 9,
};

// Warp collective kinds (gpubook_rt_warp's `op`).
enum gpubook_warp_op {
    GPUBOOK_WARP_SYNC = 0,   // __syncwarp
    GPUBOOK_WARP_SHFL,       // __shfl_sync: arg = source lane
    GPUBOOK_WARP_SHFL_UP,    // arg = delta
    GPUBOOK_WARP_SHFL_DOWN,  // arg = delta
    GPUBOOK_WARP_SHFL_XOR,   // arg = lane mask
    GPUBOOK_WARP_BALLOT,     // value = predicate
    GPUBOOK_WARP_ANY,
    GPUBOOK_WARP_ALL,
    GPUBOOK_WARP_MATCH_ANY,  // value = the 64-bit value to compare
    GPUBOOK_WARP_MATCH_ALL,
    GPUBOOK_WARP_REDUCE_ADD, // __reduce_*_sync on 32-bit integers; arg = 1 when signed
    GPUBOOK_WARP_REDUCE_MIN,
    GPUBOOK_WARP_REDUCE_MAX,
    GPUBOOK_WARP_REDUCE_AND,
    GPUBOOK_WARP_REDUCE_OR,
    GPUBOOK_WARP_REDUCE_XOR,
};

// Block barrier kinds (gpubook_rt_syncthreads's `kind`).
enum gpubook_barrier_kind {
    GPUBOOK_BAR_SYNC = 0, // __syncthreads
    GPUBOOK_BAR_COUNT,    // __syncthreads_count
    GPUBOOK_BAR_AND,      // __syncthreads_and
    GPUBOOK_BAR_OR,       // __syncthreads_or
};

// Atomic operations and operand types (gpubook_rt_atomic, check mode only).
enum gpubook_atomic_op {
    GPUBOOK_ATOM_ADD = 0, GPUBOOK_ATOM_SUB, GPUBOOK_ATOM_EXCH, GPUBOOK_ATOM_MIN, GPUBOOK_ATOM_MAX,
    GPUBOOK_ATOM_INC, GPUBOOK_ATOM_DEC, GPUBOOK_ATOM_AND, GPUBOOK_ATOM_OR, GPUBOOK_ATOM_XOR,
    GPUBOOK_ATOM_CAS,
};
enum gpubook_atomic_type {
    GPUBOOK_T_I32 = 0, GPUBOOK_T_U32, GPUBOOK_T_I64, GPUBOOK_T_U64, GPUBOOK_T_F32, GPUBOOK_T_F64,
};

extern "C" {
extern __thread gpubook_coords gpubook_current_coords __attribute__((tls_model("initial-exec")));

// One of the running thread's coordinates (gpubook_coords, by index). Check mode reads them all
// through it (an uninstrumented call, where an inline read would cost a memory-check hook a
// field), fast mode the block's. `const`: within one CUDA thread, and for the block's part within
// one block loop, the answer never changes, so the compiler asks once.
unsigned gpubook_rt_coord(int which) __attribute__((const));
// Block barrier; returns the count/and/or of `pred` over the block for the _count/_and/_or kinds.
int gpubook_rt_syncthreads(int kind, int pred, int line);
// Warp collective: the calling lane's result (the value it receives, or the vote's answer).
uint64_t gpubook_rt_warp(int op, unsigned mask, uint64_t value, int arg, int width);
// The mask of lanes of the caller's warp that have not exited (__activemask).
unsigned gpubook_rt_activemask(void);
// __threadfence() in check mode: recorded for the race checker (a release, races.h).
void gpubook_rt_threadfence(void);
// __threadfence_block() in check mode: a release to the other warps of the block only.
void gpubook_rt_threadfence_block(void);
// __nanosleep(): the calling thread waits for something; others run meanwhile.
void gpubook_rt_nanosleep(unsigned ns);

// Shared memory (targets of the source rewrite).
void* gpubook_rt_shared_var(int id, const char* name, size_t bytes, size_t align, size_t elem_size);
void* gpubook_rt_dynamic_shared(const char* name, size_t elem_size);

// Check mode: an atomic read-modify-write, bounds- and race-checked. Returns the old value.
uint64_t gpubook_rt_atomic(int op, int type, void* addr, uint64_t value, uint64_t compare);

// __trap(), assert(): report class "trap" and end the launch. Never return.
void gpubook_rt_trap(void) __attribute__((noreturn));
void gpubook_rt_assert_fail(const char* expr, const char* file, int line, const char* func)
    __attribute__((noreturn));
}

#endif
