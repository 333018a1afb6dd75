// Wrong: warp 0 reads the other warps' totals without waiting for them to be stored.
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void reduce_warp(const float* x, float* block_sums, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float v = warp_sum(i < n ? x[i] : 0.0f);
    if (lane == 0) warp_sums[warp] = v;
    if (warp == 0) {
        v = warp_sum(lane < (int)(blockDim.x / 32) ? warp_sums[lane] : 0.0f);
        if (lane == 0) block_sums[blockIdx.x] = v;
    }
}
