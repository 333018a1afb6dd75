// @feature: a grid-stride loop: 128 threads cover 5000 elements (saxpy)
// @launch: saxpy grid=2 block=64 f32=2 f32[5000]:iota f32[5000]:ones i32=5000
// @expect: y[i] = 2 * i + 1
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
