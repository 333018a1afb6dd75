// @feature: a tree reduction in shared memory, a barrier at every level (block sums)
// @launch: block_sum grid=16 block=256 f32[4096]:iota f32[16]:uninit
// @expect: sums[i] = 65536 * i + 32640
extern "C" __global__ void block_sum(const float* in, float* sums) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = s[0];
}
