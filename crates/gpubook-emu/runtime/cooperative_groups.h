// cooperative_groups.h for gpubook's CPU emulator: the subset kernels use. A thread block
// (`this_thread_block()`: sync, thread_rank, size, group_index, thread_index, dim_threads) and
// its tiles (`tiled_partition<N>`, N = 1, 2, 4 ... 32: sync, thread_rank, size,
// meta_group_rank/size, shfl, shfl_up/down/xor, any, all, ballot), `cg::sync(g)`, and
// cg::reduce with plus/less/greater (cooperative_groups/reduce.h). Each call is the warp
// collective or barrier it stands for, so the emulator's checks (divergence, invalid shuffles)
// apply to them. Grid groups (`this_grid()`, which need a cooperative launch) are not offered.
#ifndef GPUBOOK_COOPERATIVE_GROUPS_H
#define GPUBOOK_COOPERATIVE_GROUPS_H

namespace cooperative_groups {
namespace details {
// The calling thread's index within its block, x fastest (as warps are formed).
static __forceinline__ unsigned linear_thread() {
    uint3 t = threadIdx;
    dim3 b = blockDim;
    return t.x + b.x * (t.y + b.y * t.z);
}
static __forceinline__ unsigned block_threads() {
    dim3 b = blockDim;
    return b.x * b.y * b.z;
}
} // namespace details

class thread_block {
  public:
    // The barrier is named by the caller's line, as __syncthreads() is (divergence reports).
    void sync(int line = __builtin_LINE()) const { (void)gpubook_rt_syncthreads(GPUBOOK_BAR_SYNC, 0, line); }
    unsigned thread_rank() const { return details::linear_thread(); }
    unsigned size() const { return details::block_threads(); }
    unsigned long long num_threads() const { return details::block_threads(); }
    dim3 group_index() const { return dim3(blockIdx); }
    dim3 thread_index() const { return dim3(threadIdx); }
    dim3 dim_threads() const { return blockDim; }
    dim3 group_dim() const { return blockDim; }
};

static __forceinline__ thread_block this_thread_block() { return thread_block(); }

// A tile of Size consecutive threads (ranks) of a block, inside one warp.
template <unsigned Size, class Parent = void> class thread_block_tile;

template <unsigned Size> class thread_block_tile<Size, void> {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "tiled_partition<N>: N must be a power of two from 1 to 32");

  public:
    // The lanes of the caller's warp in the caller's tile.
    unsigned mask() const {
        unsigned lane = details::linear_thread() % 32;
        return Size == 32 ? 0xffffffffu : ((1u << Size) - 1) << (lane & ~(Size - 1));
    }
    void sync() const { __syncwarp(mask()); }
    unsigned thread_rank() const { return details::linear_thread() % Size; }
    static constexpr unsigned size() { return Size; }
    static constexpr unsigned long long num_threads() { return Size; }
    unsigned meta_group_rank() const { return details::linear_thread() / Size; }
    unsigned meta_group_size() const { return (details::block_threads() + Size - 1) / Size; }

    template <class T> T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, Size); }
    template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(mask(), v, d, Size); }
    template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down_sync(mask(), v, d, Size); }
    template <class T> T shfl_xor(T v, int lane_mask) const { return __shfl_xor_sync(mask(), v, lane_mask, Size); }
    int any(int pred) const { return __any_sync(mask(), pred); }
    int all(int pred) const { return __all_sync(mask(), pred); }
    // Bit r is set when the tile's thread of rank r passed a true predicate.
    unsigned ballot(int pred) const {
        unsigned lane = details::linear_thread() % 32;
        return __ballot_sync(mask(), pred) >> (lane & ~(Size - 1) & 31) & (Size == 32 ? 0xffffffffu : (1u << Size) - 1);
    }
};

// `thread_block_tile<32, thread_block>` is the same tile, as in CUDA.
template <unsigned Size, class Parent> class thread_block_tile : public thread_block_tile<Size, void> {
  public:
    thread_block_tile() = default;
    thread_block_tile(const thread_block_tile<Size, void>&) {}
};

template <unsigned Size> static __forceinline__ thread_block_tile<Size> tiled_partition(const thread_block&) {
    return thread_block_tile<Size>();
}
// A tile of a tile: ranks still count from the block's thread 0.
template <unsigned Size, unsigned ParentSize, class P>
static __forceinline__ thread_block_tile<Size> tiled_partition(const thread_block_tile<ParentSize, P>&) {
    static_assert(Size <= ParentSize, "tiled_partition<N> of a tile: N must not exceed the tile's size");
    return thread_block_tile<Size>();
}

template <class Group> static __forceinline__ void sync(const Group& g) { g.sync(); }
static __forceinline__ void sync(const thread_block& g, int line = __builtin_LINE()) { g.sync(line); }

// Needs a cooperative launch (cudaLaunchCooperativeKernel), which gpubook does not offer.
template <int N = 0> static __forceinline__ void this_grid() {
    static_assert(N != 0, "gpubook's emulator does not support grid groups (cooperative_groups::this_grid, "
                          "which needs a cooperative launch); use a thread block or its tiles");
}
} // namespace cooperative_groups

#endif
