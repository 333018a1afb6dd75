// @feature: the sm_80 warp reductions __reduce_add_sync, __reduce_min_sync, __reduce_max_sync
// @launch: reduce grid=1 block=64 u32[64]:iota u32[6]:uninit
// @expect: out[0] = 496
// @expect: out[1] = 0
// @expect: out[2] = 31
// @expect: out[3] = 1520
// @expect: out[4] = 32
// @expect: out[5] = 63
extern "C" __global__ void reduce(const unsigned* in, unsigned* out) {
    unsigned v = in[threadIdx.x];
    unsigned s = __reduce_add_sync(0xffffffffu, v);
    unsigned lo = __reduce_min_sync(0xffffffffu, v);
    unsigned hi = __reduce_max_sync(0xffffffffu, v);
    if (threadIdx.x % 32 == 0) {
        int w = threadIdx.x / 32;
        out[w * 3] = s;
        out[w * 3 + 1] = lo;
        out[w * 3 + 2] = hi;
    }
}
