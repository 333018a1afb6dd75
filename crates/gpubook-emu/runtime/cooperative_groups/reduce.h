// cooperative_groups/reduce.h for gpubook's CPU emulator: cg::reduce over a tile with
// cg::plus, cg::less (the minimum), cg::greater (the maximum) and the bitwise operators. Every
// thread of the tile gets the result, as in CUDA.
#ifndef GPUBOOK_COOPERATIVE_GROUPS_REDUCE_H
#define GPUBOOK_COOPERATIVE_GROUPS_REDUCE_H

#include <cooperative_groups.h>

namespace cooperative_groups {
template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// A butterfly over the tile: log2(Size) shuffles, after which every lane holds op over all.
template <unsigned Size, class P, class T, class Op>
static __forceinline__ T reduce(const thread_block_tile<Size, P>& tile, T value, Op op) {
    for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, (int)offset));
    return value;
}
} // namespace cooperative_groups

#endif
