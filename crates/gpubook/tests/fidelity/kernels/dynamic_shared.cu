// @feature: dynamic shared memory (extern __shared__), carved into a float and an int array
// @launch: pairs grid=4 block=64 shared=512 f32[256]:iota i32[256]:uninit
// @expect: out[i] = 2 * (idiv(i, 64) * 64 + 63 - i % 64) + 1
extern "C" __global__ void pairs(const float* in, int* out) {
    extern __shared__ float dyn[];
    float* f = dyn;
    int* k = (int*)(dyn + blockDim.x);
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    f[t] = in[base + t];
    k[t] = 1;
    __syncthreads();
    int r = blockDim.x - 1 - t;
    out[base + t] = (int)(2.0f * f[r]) + k[r];
}
