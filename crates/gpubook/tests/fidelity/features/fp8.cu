// cuda_fp8.h: E4M3 and E5M2 conversions, their rounding (to nearest, ties to even), saturation
// (__NV_SATFINITE, the constructors' choice) and overflow without it (__NV_NOSAT), NaN, the
// subnormals, pairs, and the exact way back through half. Codes are written as floats.
// launch: fp8_convert grid=1 block=32
// out: float 24
// expect: 56 126 126 127 170 -0.3125 1 0 2 127 60 123 123 124 124 127 126 127 88 89 126 0.001953125 49208 16384
// 1.0 is 0x38 (exponent field 7). 448, E4M3's largest, is 0x7e; 500 saturates to it, or is NaN
// (0x7f) without saturation. -0.3 rounds to 1.25 * 2^-2 (0xaa), read back as -0.3125. 2^-9 is the
// smallest subnormal (1); 2^-10 ties to even 0; 3 * 2^-10 ties to even 2. NaN is 0x7f in E4M3.
// E5M2: 1.0 is 0x3c, 57344 its largest (0x7b), 70000 saturates to it or is infinity (0x7c), as
// 61440 (the tie above 57344, to even) is; NaN is 0x7f here too (as an H100 gives it). 464 (the
// tie above 448) rounds to 448; 465 without saturation is NaN. 17 (1.0625 * 16) ties to even 16 (0x58), 18 is 0x59. Infinity
// saturates to 448. Code 1 reads back as 2^-9. The pair (1, -2) is 0xc038; 0x40 (2.0) is half 0x4000.
#include <cuda_fp8.h>

extern "C" __global__ void fp8_convert(float* out) {
    if (threadIdx.x != 0) return;
    float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);
    out[0] = __nv_fp8_e4m3(1.0f).__x;
    out[1] = __nv_fp8_e4m3(448.0f).__x;
    out[2] = __nv_fp8_e4m3(500.0f).__x;
    out[3] = __nv_cvt_float_to_fp8(500.0f, __NV_NOSAT, __NV_E4M3);
    __nv_fp8_e4m3 m(-0.3f);
    out[4] = m.__x;
    out[5] = (float)m;
    out[6] = __nv_cvt_float_to_fp8(0.001953125f, __NV_SATFINITE, __NV_E4M3);
    out[7] = __nv_cvt_float_to_fp8(0.0009765625f, __NV_SATFINITE, __NV_E4M3);
    out[8] = __nv_cvt_float_to_fp8(0.0029296875f, __NV_SATFINITE, __NV_E4M3);
    out[9] = __nv_cvt_float_to_fp8(nan, __NV_SATFINITE, __NV_E4M3);
    out[10] = __nv_fp8_e5m2(1.0f).__x;
    out[11] = __nv_fp8_e5m2(57344.0f).__x;
    out[12] = __nv_fp8_e5m2(70000.0f).__x;
    out[13] = __nv_cvt_float_to_fp8(70000.0f, __NV_NOSAT, __NV_E5M2);
    out[14] = __nv_cvt_float_to_fp8(61440.0f, __NV_NOSAT, __NV_E5M2);
    out[15] = __nv_cvt_float_to_fp8(nan, __NV_SATFINITE, __NV_E5M2);
    out[16] = __nv_fp8_e4m3(464.0f).__x;
    out[17] = __nv_cvt_float_to_fp8(465.0f, __NV_NOSAT, __NV_E4M3);
    out[18] = __nv_fp8_e4m3(17.0f).__x;
    out[19] = __nv_fp8_e4m3(18.0f).__x;
    out[20] = __nv_fp8_e4m3(inf).__x;
    __nv_fp8_e4m3 tiny;
    tiny.__x = 1;
    out[21] = (float)tiny;
    out[22] = __nv_fp8x2_e4m3(make_float2(1.0f, -2.0f)).__x;
    out[23] = __nv_cvt_fp8_to_halfraw(0x40, __NV_E4M3).x;
}
