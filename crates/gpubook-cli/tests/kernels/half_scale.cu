// `gpubook run` with half and bfloat16 buffers: in doubled in half precision, and divided by
// three into a bfloat16 buffer.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void scale_half(const __half* in, __half* twice, __nv_bfloat16* third, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        twice[i] = __hmul(in[i], __float2half(2.0f));
        third[i] = __float2bfloat16(__half2float(in[i]) / 3.0f);
    }
}
