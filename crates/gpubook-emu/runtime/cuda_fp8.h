// cuda_fp8.h for gpubook's CPU emulator: the 8-bit floats of Hopper's tensor cores, E4M3 (4
// exponent bits, bias 7, no infinity, largest finite 448) and E5M2 (5 exponent bits, bias 15,
// IEEE-like infinities, largest finite 57344), with the conversions kernels use: the
// __nv_cvt_* functions, the __nv_fp8_e4m3 / __nv_fp8_e5m2 types and their pairs and quads.
//
// Rounding is to nearest, ties to even. Out of range: __NV_SATFINITE clamps to the largest finite
// value (what the types' constructors do); __NV_NOSAT gives NaN in E4M3 and infinity in E5M2.
// A NaN becomes 0x7f (all ones but the sign) in either format, with its sign, as an H100's cvt
// gives it. Every FP8 value is exactly a half, so
// the way back is exact. Checked bit for bit against NVRTC on an H100 (tests/fidelity/features/
// fp8.cu).
#ifndef GPUBOOK_CUDA_FP8_H
#define GPUBOOK_CUDA_FP8_H

#include "cuda_bf16.h"
#include "cuda_fp16.h"

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;

typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

namespace gpubook {
namespace fp8 {
// Round to nearest, ties to even, of a non-negative value.
static __forceinline__ double round_even(double q) {
    double fl = __builtin_floor(q);
    double rest = q - fl;
    if (rest > 0.5) return fl + 1.0;
    if (rest < 0.5) return fl;
    return __builtin_fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

// The format's shape: mantissa bits, exponent bias, largest finite code (sign clear).
struct Format {
    int mant;
    int bias;
    unsigned max_code;
    unsigned nan_code;
    unsigned inf_code; // E5M2's infinity; E4M3 has none (overflow without saturation is NaN)
};
static __forceinline__ Format format(__nv_fp8_interpretation_t f) {
    return f == __NV_E4M3 ? Format{3, 7, 0x7eu, 0x7fu, 0x7fu} : Format{2, 15, 0x7bu, 0x7fu, 0x7cu};
}

static __forceinline__ __nv_fp8_storage_t encode(double x, __nv_saturation_t sat, __nv_fp8_interpretation_t interp) {
    Format f = format(interp);
    unsigned sign = __builtin_signbit(x) ? 0x80u : 0u;
    double a = __builtin_fabs(x);
    if (a != a) return (__nv_fp8_storage_t)(sign | f.nan_code);
    unsigned code;
    if (a > 1e300) {
        code = f.max_code + 1; // infinity: past every finite code
    } else {
        int exp;
        (void)__builtin_frexp(a, &exp); // a = m * 2^exp, m in [0.5, 1)
        int e = exp - 1;                // a = 1.xxx * 2^e
        int min_exp = 1 - f.bias;
        double steps = (double)(1 << f.mant);
        if (a == 0.0 || e < min_exp) {
            // Subnormal: whole multiples of the smallest step, 2^(min_exp - mant).
            code = (unsigned)round_even(__builtin_ldexp(a, f.mant - min_exp));
        } else {
            double frac = __builtin_ldexp(a, -e) - 1.0; // in [0, 1)
            unsigned m = (unsigned)round_even(frac * steps);
            if (m == (unsigned)steps) {
                m = 0;
                e += 1;
            }
            int field = e + f.bias;
            code = field > 0xff ? 0x100u : ((unsigned)field << f.mant) | m;
        }
    }
    if (code > f.max_code) code = sat == __NV_SATFINITE ? f.max_code : f.inf_code;
    return (__nv_fp8_storage_t)(sign | code);
}

// Exact: every E4M3 and E5M2 value is a half.
static __forceinline__ float decode(__nv_fp8_storage_t v, __nv_fp8_interpretation_t interp) {
    Format f = format(interp);
    unsigned sign = v & 0x80u, code = v & 0x7fu;
    float s = sign ? -1.0f : 1.0f;
    if (interp == __NV_E4M3 && code == 0x7fu) return __builtin_nanf("");
    if (interp == __NV_E5M2 && code >= 0x7cu) return code == 0x7cu ? s * __builtin_inff() : __builtin_nanf("");
    unsigned field = code >> f.mant, m = code & ((1u << f.mant) - 1u);
    if (field == 0) return s * __builtin_ldexpf((float)m, 1 - f.bias - f.mant);
    return s * __builtin_ldexpf(1.0f + (float)m / (float)(1u << f.mant), (int)field - f.bias);
}
} // namespace fp8
} // namespace gpubook

static __forceinline__ __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return ::gpubook::fp8::encode(x, sat, i);
}
static __forceinline__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return ::gpubook::fp8::encode((double)x, sat, i);
}
static __forceinline__ __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return (__nv_fp8x2_storage_t)(__nv_cvt_float_to_fp8(x.x, sat, i) | (__nv_cvt_float_to_fp8(x.y, sat, i) << 8));
}
static __forceinline__ __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(x.x, sat, i) | (__nv_cvt_double_to_fp8(x.y, sat, i) << 8));
}
static __forceinline__ __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return __nv_cvt_float_to_fp8((float)__half(x), sat, i);
}
static __forceinline__ __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t i) {
    return __nv_cvt_float_to_fp8((float)__nv_bfloat16(x), sat, i);
}
static __forceinline__ __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t i) {
    return (__half_raw)__half(::gpubook::fp8::decode(x, i));
}
static __forceinline__ __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x, __nv_fp8_interpretation_t i) {
    __half_raw lo = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x & 0xffu), i);
    __half_raw hi = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x >> 8), i);
    return __half2_raw{lo.x, hi.x};
}

// The types: one value, a pair and a quad of each format. Their constructors saturate to the
// largest finite value, as CUDA's do.
#define GPUBOOK_FP8_TYPES(T, T2, T4, INTERP)                                                                      \
    struct T {                                                                                                    \
        __nv_fp8_storage_t __x;                                                                                   \
        T() = default;                                                                                            \
        __host__ __device__ explicit T(float f) : __x(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, INTERP)) {}        \
        __host__ __device__ explicit T(double f) : __x(__nv_cvt_double_to_fp8(f, __NV_SATFINITE, INTERP)) {}      \
        __host__ __device__ explicit T(__half h) : __x(__nv_cvt_float_to_fp8((float)h, __NV_SATFINITE, INTERP)) {} \
        __host__ __device__ explicit T(__nv_bfloat16 h)                                                           \
            : __x(__nv_cvt_float_to_fp8((float)h, __NV_SATFINITE, INTERP)) {}                                     \
        __host__ __device__ explicit T(int i) : __x(__nv_cvt_float_to_fp8((float)i, __NV_SATFINITE, INTERP)) {}   \
        __host__ __device__ explicit T(unsigned i)                                                                \
            : __x(__nv_cvt_float_to_fp8((float)i, __NV_SATFINITE, INTERP)) {}                                     \
        __host__ __device__ explicit operator float() const { return ::gpubook::fp8::decode(__x, INTERP); }      \
        __host__ __device__ explicit operator double() const { return (double)::gpubook::fp8::decode(__x, INTERP); } \
        __host__ __device__ explicit operator __half() const { return __half(::gpubook::fp8::decode(__x, INTERP)); } \
        __host__ __device__ explicit operator __nv_bfloat16() const {                                             \
            return __nv_bfloat16(::gpubook::fp8::decode(__x, INTERP));                                            \
        }                                                                                                         \
    };                                                                                                            \
    struct __attribute__((aligned(2))) T2 {                                                                       \
        __nv_fp8x2_storage_t __x;                                                                                 \
        T2() = default;                                                                                           \
        __host__ __device__ explicit T2(float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, INTERP)) {}   \
        __host__ __device__ explicit T2(double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, INTERP)) {} \
        __host__ __device__ explicit operator float2() const {                                                    \
            return make_float2(::gpubook::fp8::decode((__nv_fp8_storage_t)(__x & 0xffu), INTERP),                  \
                               ::gpubook::fp8::decode((__nv_fp8_storage_t)(__x >> 8), INTERP));                    \
        }                                                                                                         \
    };                                                                                                            \
    struct __attribute__((aligned(4))) T4 {                                                                       \
        __nv_fp8x4_storage_t __x;                                                                                 \
        T4() = default;                                                                                           \
        __host__ __device__ explicit T4(float4 f)                                                                 \
            : __x((unsigned)__nv_cvt_float2_to_fp8x2(make_float2(f.x, f.y), __NV_SATFINITE, INTERP) |             \
                  ((unsigned)__nv_cvt_float2_to_fp8x2(make_float2(f.z, f.w), __NV_SATFINITE, INTERP) << 16)) {}   \
        __host__ __device__ explicit operator float4() const {                                                    \
            return make_float4(::gpubook::fp8::decode((__nv_fp8_storage_t)(__x & 0xffu), INTERP),                 \
                               ::gpubook::fp8::decode((__nv_fp8_storage_t)((__x >> 8) & 0xffu), INTERP),          \
                               ::gpubook::fp8::decode((__nv_fp8_storage_t)((__x >> 16) & 0xffu), INTERP),         \
                               ::gpubook::fp8::decode((__nv_fp8_storage_t)(__x >> 24), INTERP));                  \
        }                                                                                                         \
    };
GPUBOOK_FP8_TYPES(__nv_fp8_e4m3, __nv_fp8x2_e4m3, __nv_fp8x4_e4m3, __NV_E4M3)
GPUBOOK_FP8_TYPES(__nv_fp8_e5m2, __nv_fp8x2_e5m2, __nv_fp8x4_e5m2, __NV_E5M2)
#undef GPUBOOK_FP8_TYPES

#endif
