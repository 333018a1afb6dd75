// @feature: persistent co-resident blocks: a grid-wide barrier made of an atomic counter and a
// volatile spin; after it block 0 reads what every block wrote (8 blocks fit on any GPU at once)
// @launch: two_phase grid=8 block=64 f32[512]:iota f32[8]:uninit u32[1]:zeros f32[1]:uninit
// @expect: total[0] = 130816
extern "C" __global__ void two_phase(const float* in, float* partial, unsigned* arrived, float* total) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t == 0) {
        float sum = 0.0f;
        for (int k = 0; k < 64; k++) sum += s[k];
        partial[blockIdx.x] = sum;
        __threadfence(); // the partial sum before the arrival that announces it
        atomicAdd(arrived, 1u);
        while (*(volatile unsigned*)arrived < gridDim.x) {
        }
    }
    __syncthreads();
    if (blockIdx.x == 0 && t == 0) {
        float sum = 0.0f;
        for (int b = 0; b < gridDim.x; b++) sum += ((volatile float*)partial)[b];
        total[0] = sum;
    }
}
