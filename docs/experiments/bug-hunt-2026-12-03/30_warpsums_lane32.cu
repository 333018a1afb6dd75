// gpubook run 30_warpsums_lane32.cu --kernel bsum --grid 1 --block 256 --arg f32[256]:iota --arg f32[1]:zeros --mode check
// BUG: second stage of a block reduction: first warp reads warpSums[lane] for all 32 lanes, but only 8 warps wrote
extern "C" __global__ void bsum(const float* in, float* out) {
    __shared__ float warpSums[32];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    float v = in[t];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (lane == 0) warpSums[w] = v;
    __syncthreads();
    if (w == 0) {
        v = warpSums[lane];                      // should be lane < blockDim.x/32 ? warpSums[lane] : 0
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (lane == 0) out[0] = v;
    }
}
