// cuda_bf16.h for gpubook's CPU emulator: __nv_bfloat16 and __nv_bfloat162 with the conversions, arithmetic and
// comparison intrinsics kernels use, operators, and warp shuffles. Stored as bits; see
// device/low_precision.h for the rounding. The body is device/low_precision_type.h, shared with
// its sibling.
#ifndef GPUBOOK_CUDA_BF16_H
#define GPUBOOK_CUDA_BF16_H

#include "device/low_precision.h"

#define GPUBOOK_LP_T __nv_bfloat16
#define GPUBOOK_LP_T2 __nv_bfloat162
#define GPUBOOK_LP_RAW __nv_bfloat16_raw
#define GPUBOOK_LP_N bfloat16
#define GPUBOOK_LP_N2 bfloat162
#define GPUBOOK_LP_FROM_FLOAT ::gpubook::lowp::float_to_bf16
#define GPUBOOK_LP_TO_FLOAT ::gpubook::lowp::bf16_to_float
#define GPUBOOK_LP_INF_BITS 0x7f80u
#include "device/low_precision_type.h"
#undef GPUBOOK_LP_T
#undef GPUBOOK_LP_T2
#undef GPUBOOK_LP_RAW
#undef GPUBOOK_LP_N
#undef GPUBOOK_LP_N2
#undef GPUBOOK_LP_FROM_FLOAT
#undef GPUBOOK_LP_TO_FLOAT
#undef GPUBOOK_LP_INF_BITS

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#endif
