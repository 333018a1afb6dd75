// Just enough of gpubook_device.h for kernels/bench/vector_add.cu, with the block loop the
// worker's fast mode uses (device/kernel_export.h), here for check mode too.
#include <stdint.h>
#define __global__
#define __restrict__ __restrict
struct dim3 {
    unsigned x, y, z;
};
struct float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
extern dim3 threadIdx, blockIdx, blockDim, gridDim;
