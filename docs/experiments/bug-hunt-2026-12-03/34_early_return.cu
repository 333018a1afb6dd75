// gpubook run 34_early_return.cu --kernel smooth --grid 4 --block 128 --arg f32[500]:iota --arg f32[500]:zeros --arg i32=500 --mode check
// BUG: early return for out-of-range threads before a __syncthreads(): only the last block diverges
extern "C" __global__ void smooth(const float* in, float* out, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();
    float l = threadIdx.x > 0 ? s[threadIdx.x - 1] : s[threadIdx.x];
    out[i] = 0.5f * (l + s[threadIdx.x]);
}
