// @feature: __constant__ memory initialised in the source: a 5-tap filter's coefficients
// @launch: filter grid=4 block=256 f32[1004]:iota f32[1000]:uninit i32=1000
// @expect: out[i] = 15 * i + 40
__constant__ float taps[5] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
extern "C" __global__ void filter(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < 5; k++) s += taps[k] * in[i + k];
    out[i] = s;
}
