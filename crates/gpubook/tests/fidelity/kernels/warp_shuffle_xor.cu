// @feature: __shfl_xor_sync (a butterfly: every lane ends with the warp's sum) and __shfl_sync
// @launch: all_reduce grid=1 block=96 i32[96]:iota i32[96]:uninit
// @expect: out[i] = 1024 * idiv(i, 32) + 496 + idiv(i, 32) * 32 + 5
extern "C" __global__ void all_reduce(const int* in, int* out) {
    int i = threadIdx.x;
    int v = in[i];
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
    int lane5 = __shfl_sync(0xffffffffu, in[i], 5); // lane 5's input, broadcast
    out[i] = v + lane5;
}
