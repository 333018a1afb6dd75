// A buffer of __half (Rust's half::f16 on the host): each thread writes its index times 0.5,
// multiplied in half precision.
// launch: halves grid=1 block=4
// out: half 4
// expect: 0 0.5 1 1.5
#include <cuda_fp16.h>

extern "C" __global__ void halves(__half* out) {
    int i = threadIdx.x;
    out[i] = __hmul(__int2half_rn(i), __float2half(0.5f));
}
