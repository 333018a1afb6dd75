// @feature: cuda_fp8.h conversions over a sweep of 4096 floats, normal and subnormal (every third
// value divided by 1024), through E4M3 and E5M2 and back: within half a unit in the last place
// (1/16 and 1/8 relative), and, between the emulator and a GPU, the same bytes
// @launch: fp8_sweep grid=16 block=256 f32[4096]:uninit f32[4096]:uninit
// @expect: e4m3[i] = ((i - 2048) * 0.1953125) / (i % 3 == 0 ? 1024 : 1)
// @expect: e5m2[i] = ((i - 2048) * 0.1953125) / (i % 3 == 0 ? 1024 : 1)
// @tolerance: 0.125
#include <cuda_fp8.h>

extern "C" __global__ void fp8_sweep(float* e4m3, float* e5m2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = ((i - 2048) * 0.1953125f) / (i % 3 == 0 ? 1024.0f : 1.0f);
    e4m3[i] = (float)__nv_fp8_e4m3(x);
    e5m2[i] = (float)__nv_fp8_e5m2(x);
}
