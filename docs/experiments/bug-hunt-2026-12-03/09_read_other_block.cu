// gpubook run 09_read_other_block.cu --kernel twopass --grid 4 --block 64 --arg f32[256]:iota --arg f32[4]:zeros --arg f32[256]:zeros --mode check
// BUG: each block writes its partial sum, then (same launch) normalises using ALL blocks' partial sums
extern "C" __global__ void twopass(const float* in, float* partial, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    s[t] = in[g];
    __syncthreads();
    for (int st = 32; st > 0; st >>= 1) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
    if (t == 0) partial[blockIdx.x] = s[0];
    __syncthreads();
    float total = 0.f;
    for (int b = 0; b < gridDim.x; ++b) total += partial[b];   // other blocks may not have written yet
    out[g] = in[g] / total;
}
