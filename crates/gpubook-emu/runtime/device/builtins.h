// threadIdx, blockIdx, blockDim, gridDim, warpSize and the qualifiers CUDA C adds to C++.
#ifndef GPUBOOK_BUILTINS_H
#define GPUBOOK_BUILTINS_H

// Execution-space qualifiers mean nothing on the CPU: every function is host code here.
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ __attribute__((always_inline)) inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __grid_constant__
// `struct __align__(16) Pair { float a, b, c, d; };`
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
// __restrict__ is already a g++/clang keyword.

namespace gpubook {
namespace device {
// The block's coordinates come from an uninstrumented `const` call (abi.h, gpubook_rt_coord): the
// compiler asks once a thread, and in fast mode's block loop once a loop.
#define GPUBOOK_COORDS(first) gpubook_rt_coord(first), gpubook_rt_coord(first + 1), gpubook_rt_coord(first + 2)
#if defined(GPUBOOK_CHECK) && !defined(GPUBOOK_CHECK_PASS)
// Check mode on ThreadSanitizer's hooks alone: threadIdx the same way (an inline read would cost
// a memory-check hook a field).
static __forceinline__ uint3 thread_idx() { return uint3{GPUBOOK_COORDS(GPUBOOK_THREAD_IDX)}; }
#else
// Fast mode, and check mode with its compiler pass (which checks only accesses through a
// pointer): threadIdx is a thread-local copy (abi.h, gpubook_coords), which a block loop keeps
// up to date and the compiler reads back from what the loop just stored.
static __forceinline__ uint3 thread_idx() {
    const gpubook_dim3 d = gpubook_current_coords.thread_idx;
    return uint3{d.x, d.y, d.z};
}
#endif
static __forceinline__ uint3 block_idx() { return uint3{GPUBOOK_COORDS(GPUBOOK_BLOCK_IDX)}; }
static __forceinline__ dim3 block_dim() { return dim3(GPUBOOK_COORDS(GPUBOOK_BLOCK_DIM)); }
static __forceinline__ dim3 grid_dim() { return dim3(GPUBOOK_COORDS(GPUBOOK_GRID_DIM)); }
#undef GPUBOOK_COORDS
} // namespace device
} // namespace gpubook

// Macros rather than variables: the values differ per fiber, and a macro keeps `threadIdx.x`
// a cheap inline read. The worker never includes this header, so these names cannot clobber it.
#define threadIdx (::gpubook::device::thread_idx())
#define blockIdx (::gpubook::device::block_idx())
#define blockDim (::gpubook::device::block_dim())
#define gridDim (::gpubook::device::grid_dim())
#define warpSize 32

#endif
