// @feature: __constant__ and __device__ variables the host writes before the launch and reads after (cuModuleGetGlobal)
// @symbol: coeffs=f32[4]:1,2,3,4
// @symbol: scale=f32=0.5
// @symbol: threshold=f32=1000
// @symbol: above=u32=5
// @launch: weigh grid=4 block=256 f32[1000]:iota f32[1000]:uninit i32=1000
// @expect: y[i] = (i % 4 + 1) * i * 0.5
// @expect: above[0] = 5 + 208
// The source's own values differ from the host's, so a write that never happened shows.
__constant__ float coeffs[4] = {9.0f, 9.0f, 9.0f, 9.0f};
__constant__ float scale = 3.0f;
__constant__ float threshold;
__device__ unsigned above = 100;
extern "C" __global__ void weigh(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = coeffs[i % 4] * x[i] * scale;
    y[i] = v;
    if (v > threshold) atomicAdd(&above, 1u);
}
