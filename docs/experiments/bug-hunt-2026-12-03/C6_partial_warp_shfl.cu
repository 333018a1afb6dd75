// gpubook run C6_partial_warp_shfl.cu --kernel wsum --grid 1 --block 48 --arg f32[48]:iota --arg f32[2]:zeros --mode check
// CORRECT: block of 48; the partial second warp uses a mask of its 16 lanes and __shfl_xor_sync with width 16
extern "C" __global__ void wsum(const float* in, float* out) {
    int t = threadIdx.x, lane = t & 31;
    float v = in[t];
    if (t < 32) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    } else {
        for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0x0000ffff, v, o, 16);
    }
    if (lane == 0) out[t / 32] = v;
}
