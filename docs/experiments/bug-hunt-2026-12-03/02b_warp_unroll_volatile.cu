// gpubook run 02b_warp_unroll_volatile.cu --kernel reduce --grid 1 --block 256 --arg f32[256]:iota --arg f32[1]:zeros --mode check
// BUG: pre-Volta idiom: last warp unrolled WITH volatile but no __syncwarp (racy under independent thread scheduling)
__device__ void warpReduce(volatile float* s, int t) {
    s[t] += s[t + 32];
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
}
extern "C" __global__ void reduce(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t < 32) warpReduce(s, t);
    if (t == 0) out[0] = s[0];
}
