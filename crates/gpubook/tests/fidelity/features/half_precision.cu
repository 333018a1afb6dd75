// cuda_fp16.h: __half and __half2 conversions, arithmetic intrinsics, operators, a shuffle.
// launch: half_math grid=1 block=32
// out: float 8
// expect: 1.5 0.333251953125 2049 65504 0 6 -2.5 496
// 1.5 is exact; 1/3 rounds to 0.333251953125; __hadd(2048, 1) rounds to 2048 (the tie goes to
// even), plus 1 in float = 2049; 65504 is the largest half; 0.1 + 0.2 != 0.3 in half (the sum
// 0.29992675... ties down to 0.2998046875); __hmul2((1,2),(2,2)) summed = 6; __hneg(2.5); a
// shuffle-xor sum of the 32 lane ids in __half = 496.
#include <cuda_fp16.h>

extern "C" __global__ void half_math(float* out) {
    int lane = threadIdx.x;
    __half sum = __float2half((float)lane);
    for (int m = 16; m > 0; m /= 2) sum = __hadd(sum, __shfl_xor_sync(0xffffffffu, sum, m));
    if (lane != 0) return;
    out[0] = __half2float(__float2half(1.5f));
    out[1] = __half2float(__hdiv(__float2half(1.0f), __float2half(3.0f)));
    out[2] = __half2float(__hadd(__float2half(2048.0f), __float2half(1.0f))) + 1.0f;
    out[3] = __half2float(__float2half(65504.0f));
    __half a = __float2half(0.1f), b = __float2half(0.2f);
    out[4] = __heq(a + b, __float2half(0.3f)) ? 1.0f : 0.0f;
    __half2 x = __floats2half2_rn(1.0f, 2.0f), y = __float2half2_rn(2.0f);
    __half2 p = __hmul2(x, y);
    out[5] = __low2float(p) + __high2float(p);
    out[6] = __half2float(__hneg(__float2half(2.5f)));
    out[7] = __half2float(sum);
}
