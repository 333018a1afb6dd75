// Warp collectives: shuffles, votes, __syncwarp. Each is a rendezvous of the lanes named in
// `mask`, run by the worker (gpubook_rt_warp), which also reports lanes that never arrive.
#ifndef GPUBOOK_WARP_H
#define GPUBOOK_WARP_H

namespace gpubook {
namespace device {
// Shuffles move any value of up to 8 bytes as raw bits.
template <class T>
static __forceinline__ T shuffle(int op, unsigned mask, T v, int arg, int width) {
    static_assert(sizeof(T) <= 8, "shuffle of a type of at most 8 bytes");
    uint64_t bits = 0;
    __builtin_memcpy(&bits, &v, sizeof(T));
    bits = gpubook_rt_warp(op, mask, bits, arg, width);
    T out;
    __builtin_memcpy(&out, &bits, sizeof(T));
    return out;
}
} // namespace device
} // namespace gpubook

#define GPUBOOK_SHUFFLES(T)                                                                 \
    static __forceinline__ T __shfl_sync(unsigned m, T v, int src, int w = 32) {            \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL, m, v, src, w);              \
    }                                                                                       \
    static __forceinline__ T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) {      \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_UP, m, v, (int)d, w);        \
    }                                                                                       \
    static __forceinline__ T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) {    \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_DOWN, m, v, (int)d, w);      \
    }                                                                                       \
    static __forceinline__ T __shfl_xor_sync(unsigned m, T v, int lm, int w = 32) {         \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_XOR, m, v, lm, w);           \
    }
GPUBOOK_SHUFFLES(int)
GPUBOOK_SHUFFLES(unsigned)
GPUBOOK_SHUFFLES(long)
GPUBOOK_SHUFFLES(unsigned long)
GPUBOOK_SHUFFLES(long long)
GPUBOOK_SHUFFLES(unsigned long long)
GPUBOOK_SHUFFLES(float)
GPUBOOK_SHUFFLES(double)
#undef GPUBOOK_SHUFFLES

static __forceinline__ void __syncwarp(unsigned mask = 0xffffffffu) {
    gpubook_rt_warp(GPUBOOK_WARP_SYNC, mask, 0, 0, 32);
}
static __forceinline__ unsigned __ballot_sync(unsigned mask, int pred) {
    return (unsigned)gpubook_rt_warp(GPUBOOK_WARP_BALLOT, mask, pred != 0, 0, 32);
}
static __forceinline__ int __any_sync(unsigned mask, int pred) {
    return (int)gpubook_rt_warp(GPUBOOK_WARP_ANY, mask, pred != 0, 0, 32);
}
static __forceinline__ int __all_sync(unsigned mask, int pred) {
    return (int)gpubook_rt_warp(GPUBOOK_WARP_ALL, mask, pred != 0, 0, 32);
}
static __forceinline__ unsigned __activemask() { return gpubook_rt_activemask(); }

// __match_*_sync compare a 32- or 64-bit value across the lanes.
#define GPUBOOK_MATCH(T)                                                                    \
    static __forceinline__ unsigned __match_any_sync(unsigned m, T v) {                     \
        return (unsigned)gpubook_rt_warp(GPUBOOK_WARP_MATCH_ANY, m, (uint64_t)v, 0, 32);    \
    }                                                                                       \
    static __forceinline__ unsigned __match_all_sync(unsigned m, T v, int* pred) {          \
        unsigned r = (unsigned)gpubook_rt_warp(GPUBOOK_WARP_MATCH_ALL, m, (uint64_t)v, 0, 32); \
        *pred = r != 0;                                                                     \
        return r;                                                                           \
    }
GPUBOOK_MATCH(int)
GPUBOOK_MATCH(unsigned)
GPUBOOK_MATCH(long long)
GPUBOOK_MATCH(unsigned long long)
#undef GPUBOOK_MATCH

// __reduce_*_sync (sm_80) on 32-bit integers; arg 1 marks a signed min/max.
#define GPUBOOK_REDUCE(NAME, OP, T, SIGNED)                                                 \
    static __forceinline__ T NAME(unsigned m, T v) {                                        \
        return (T)gpubook_rt_warp(OP, m, (uint64_t)(unsigned)v, SIGNED, 32);                \
    }
GPUBOOK_REDUCE(__reduce_add_sync, GPUBOOK_WARP_REDUCE_ADD, unsigned, 0)
GPUBOOK_REDUCE(__reduce_add_sync, GPUBOOK_WARP_REDUCE_ADD, int, 1)
GPUBOOK_REDUCE(__reduce_min_sync, GPUBOOK_WARP_REDUCE_MIN, unsigned, 0)
GPUBOOK_REDUCE(__reduce_min_sync, GPUBOOK_WARP_REDUCE_MIN, int, 1)
GPUBOOK_REDUCE(__reduce_max_sync, GPUBOOK_WARP_REDUCE_MAX, unsigned, 0)
GPUBOOK_REDUCE(__reduce_max_sync, GPUBOOK_WARP_REDUCE_MAX, int, 1)
GPUBOOK_REDUCE(__reduce_and_sync, GPUBOOK_WARP_REDUCE_AND, unsigned, 0)
GPUBOOK_REDUCE(__reduce_or_sync, GPUBOOK_WARP_REDUCE_OR, unsigned, 0)
GPUBOOK_REDUCE(__reduce_xor_sync, GPUBOOK_WARP_REDUCE_XOR, unsigned, 0)
#undef GPUBOOK_REDUCE

#endif
