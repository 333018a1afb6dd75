// @feature: 1D indexing: one thread per element, a partial last block guarded by `i < n`
// @launch: vector_add grid=4 block=256 f32[1000]:iota f32[1000]:iota f32[1000]:uninit i32=1000
// @expect: c[i] = 2 * i
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
