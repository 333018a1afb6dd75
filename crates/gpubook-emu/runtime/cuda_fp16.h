// cuda_fp16.h for gpubook's CPU emulator: __half and __half2 with the conversions, arithmetic and
// comparison intrinsics kernels use, operators, and warp shuffles. Stored as bits; see
// device/low_precision.h for the rounding. The body is device/low_precision_type.h, shared with
// its sibling.
#ifndef GPUBOOK_CUDA_FP16_H
#define GPUBOOK_CUDA_FP16_H

#include "device/low_precision.h"

#define GPUBOOK_LP_T __half
#define GPUBOOK_LP_T2 __half2
#define GPUBOOK_LP_RAW __half_raw
#define GPUBOOK_LP_N half
#define GPUBOOK_LP_N2 half2
#define GPUBOOK_LP_FROM_FLOAT ::gpubook::lowp::float_to_half
#define GPUBOOK_LP_TO_FLOAT ::gpubook::lowp::half_to_float
#define GPUBOOK_LP_INF_BITS 0x7c00u
#include "device/low_precision_type.h"
#undef GPUBOOK_LP_T
#undef GPUBOOK_LP_T2
#undef GPUBOOK_LP_RAW
#undef GPUBOOK_LP_N
#undef GPUBOOK_LP_N2
#undef GPUBOOK_LP_FROM_FLOAT
#undef GPUBOOK_LP_TO_FLOAT
#undef GPUBOOK_LP_INF_BITS

typedef __half half;
typedef __half2 half2;

// A pair's bits, as __nv_cvt_fp8x2_to_halfraw2 (cuda_fp8.h) returns them.
struct __half2_raw {
    unsigned short x, y;
};

#endif
