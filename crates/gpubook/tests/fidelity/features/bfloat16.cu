// cuda_bf16.h: __nv_bfloat16 conversions (round to nearest even on the top 16 bits of a float),
// arithmetic, __nv_bfloat162, and a fused multiply-add.
// launch: bf16_math grid=1 block=1
// out: float 6
// expect: 1.5 0.333984375 256 3.140625 7 -1
// 1/3 in bfloat16 is 0.333984375; 256 + 1 rounds back to 256 (8 bits of mantissa); pi rounds to
// 3.140625; fma(2, 3, 1) = 7; bf162 (1, -2) summed halves = -1.
#include <cuda_bf16.h>

extern "C" __global__ void bf16_math(float* out) {
    out[0] = __bfloat162float(__float2bfloat16(1.5f));
    out[1] = __bfloat162float(__hdiv(__float2bfloat16(1.0f), __float2bfloat16(3.0f)));
    out[2] = __bfloat162float(__hadd(__float2bfloat16(256.0f), __float2bfloat16(1.0f)));
    out[3] = __bfloat162float(__float2bfloat16(3.14159265f));
    out[4] = __bfloat162float(__hfma(__float2bfloat16(2.0f), __float2bfloat16(3.0f), __float2bfloat16(1.0f)));
    __nv_bfloat162 v = __floats2bfloat162_rn(1.0f, -2.0f);
    out[5] = __low2float(v) + __high2float(v);
}
