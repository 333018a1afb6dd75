// @feature: __shfl_down_sync: each warp sums its 32 values, lane 0 writes the sum
// @launch: warp_sums grid=2 block=128 f32[256]:iota f32[8]:uninit
// @expect: sums[i] = 1024 * i + 496
extern "C" __global__ void warp_sums(const float* in, float* sums) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0) sums[i / 32] = v;
}
