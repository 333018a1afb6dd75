// gpubook run 14_dynshared_size.cu --kernel dotpair --grid 2 --block 128 --shared 512 --arg f32[256]:iota --arg f32[256]:iota --arg f32[2]:zeros --mode check
// BUG: kernel carves TWO arrays of blockDim floats out of dynamic shared memory; launch gives blockDim*sizeof(float) bytes only
extern "C" __global__ void dotpair(const float* a, const float* b, float* out) {
    extern __shared__ float sm[];
    float* sa = sm;
    float* sb = sm + blockDim.x;
    int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    sa[t] = a[g];
    sb[t] = b[g];
    __syncthreads();
    sa[t] *= sb[t];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (t < st) sa[t] += sa[t + st]; __syncthreads(); }
    if (t == 0) out[blockIdx.x] = sa[0];
}
