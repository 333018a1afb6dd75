// A buffer of __nv_bfloat16 (Rust's half::bf16): 1/(i+1) rounded to bfloat16.
// launch: reciprocals grid=1 block=4
// out: bf16 4
// expect: 1 0.5 0.333984375 0.25
#include <cuda_bf16.h>

extern "C" __global__ void reciprocals(__nv_bfloat16* out) {
    int i = threadIdx.x;
    out[i] = __float2bfloat16(1.0f / (float)(i + 1));
}
