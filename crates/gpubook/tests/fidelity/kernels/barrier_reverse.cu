// @feature: __syncthreads between a shared-memory write and other threads' reads (block reverse)
// @launch: block_reverse grid=4 block=128 f32[512]:iota f32[512]:uninit
// @expect: out[i] = idiv(i, 128) * 128 + 127 - i % 128
extern "C" __global__ void block_reverse(const float* in, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = in[base + t];
    __syncthreads();
    out[base + t] = s[blockDim.x - 1 - t];
}
