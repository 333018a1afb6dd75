// cuda_fp16.h for gpubook's CPU emulator: __half and __half2 with the conversions, arithmetic and
// comparison intrinsics kernels use, operators, and warp shuffles. Stored as bits; see
// device/low_precision.h for the rounding. Generated with its sibling from one template (the
// same text with the names swapped), so the two stay alike.
#ifndef GPUBOOK_CUDA_FP16_H
#define GPUBOOK_CUDA_FP16_H

#include "device/low_precision.h"

struct __half_raw {
    unsigned short x;
};
struct __half {
    unsigned short __x;
    __half() = default;
    __host__ __device__ __half(float f) : __x(::gpubook::lowp::float_to_half(f)) {}
    __host__ __device__ __half(double f) : __x(::gpubook::lowp::float_to_half((float)f)) {}
    __host__ __device__ __half(int i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(unsigned i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(long long i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(short i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(unsigned short i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(long i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(unsigned long i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(unsigned long long i) : __x(::gpubook::lowp::float_to_half((float)i)) {}
    __host__ __device__ __half(const __half_raw& r) : __x(r.x) {}
    __host__ __device__ operator float() const { return ::gpubook::lowp::half_to_float(__x); }
    __host__ __device__ operator __half_raw() const { return __half_raw{__x}; }
};
struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    __host__ __device__ __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half half;
typedef __half2 half2;

// Conversions.
static __forceinline__ __half __float2half(float f) { return __half(f); }
static __forceinline__ __half __float2half_rn(float f) { return __half(f); }
static __forceinline__ float __half2float(__half h) { return (float)h; }
static __forceinline__ __half __double2half(double d) { return __half((float)d); }
static __forceinline__ __half __int2half_rn(int i) { return __half((float)i); }
static __forceinline__ __half __uint2half_rn(unsigned i) { return __half((float)i); }
static __forceinline__ int __half2int_rz(__half h) { return (int)(float)h; }
static __forceinline__ int __half2int_rn(__half h) { return __float2int_rn((float)h); }
static __forceinline__ __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static __forceinline__ __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static __forceinline__ __half2 __float22half2_rn(float2 v) { return __half2(__half(v.x), __half(v.y)); }
static __forceinline__ float2 __half22float2(__half2 v) { return make_float2((float)v.x, (float)v.y); }
static __forceinline__ __half2 __half2half2(__half h) { return __half2(h, h); }
static __forceinline__ __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static __forceinline__ __half2 make_half2(__half a, __half b) { return __half2(a, b); }
static __forceinline__ __half __low2half(__half2 v) { return v.x; }
static __forceinline__ __half __high2half(__half2 v) { return v.y; }
static __forceinline__ float __low2float(__half2 v) { return (float)v.x; }
static __forceinline__ float __high2float(__half2 v) { return (float)v.y; }
static __forceinline__ __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static __forceinline__ __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static __forceinline__ short __half_as_short(__half h) { return (short)h.__x; }
static __forceinline__ unsigned short __half_as_ushort(__half h) { return h.__x; }
static __forceinline__ __half __short_as_half(short s) { __half h; h.__x = (unsigned short)s; return h; }
static __forceinline__ __half __ushort_as_half(unsigned short s) { __half h; h.__x = s; return h; }

// Arithmetic: in float, rounded once to __half.
#define GPUBOOK_LOWP_BINARY(NAME, EXPR)                                                     \
    static __forceinline__ __half NAME(__half a, __half b) { float x = (float)a, y = (float)b; return __half(EXPR); } \
    static __forceinline__ __half2 NAME##2(__half2 a, __half2 b) { return __half2(NAME(a.x, b.x), NAME(a.y, b.y)); }
GPUBOOK_LOWP_BINARY(__hadd, x + y)
GPUBOOK_LOWP_BINARY(__hsub, x - y)
GPUBOOK_LOWP_BINARY(__hmul, x * y)
GPUBOOK_LOWP_BINARY(__hdiv, x / y)
GPUBOOK_LOWP_BINARY(__hmax, fmaxf(x, y))
GPUBOOK_LOWP_BINARY(__hmin, fminf(x, y))
#undef GPUBOOK_LOWP_BINARY
static __forceinline__ __half __hfma(__half a, __half b, __half c) { return __half(fmaf((float)a, (float)b, (float)c)); }
static __forceinline__ __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
static __forceinline__ __half __hneg(__half a) { return __ushort_as_half((unsigned short)(a.__x ^ 0x8000u)); }
static __forceinline__ __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
static __forceinline__ __half __habs(__half a) { return __ushort_as_half((unsigned short)(a.__x & 0x7fffu)); }
static __forceinline__ __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
static __forceinline__ bool __hisnan(__half a) { float f = (float)a; return f != f; }
static __forceinline__ bool __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u; }
// Comparisons (ordered: false when either is NaN, except __hne's unordered cousin).
static __forceinline__ bool __heq(__half a, __half b) { return (float)a == (float)b; }
static __forceinline__ bool __hne(__half a, __half b) { return (float)a < (float)b || (float)a > (float)b; }
static __forceinline__ bool __hlt(__half a, __half b) { return (float)a < (float)b; }
static __forceinline__ bool __hle(__half a, __half b) { return (float)a <= (float)b; }
static __forceinline__ bool __hgt(__half a, __half b) { return (float)a > (float)b; }
static __forceinline__ bool __hge(__half a, __half b) { return (float)a >= (float)b; }
// Math on __half (the h-prefixed functions), in float.
static __forceinline__ __half hsqrt(__half a) { return __half(sqrtf((float)a)); }
static __forceinline__ __half hrsqrt(__half a) { return __half(1.0f / sqrtf((float)a)); }
static __forceinline__ __half hexp(__half a) { return __half(expf((float)a)); }
static __forceinline__ __half hlog(__half a) { return __half(logf((float)a)); }
static __forceinline__ __half hfloor(__half a) { return __half(floorf((float)a)); }
static __forceinline__ __half hceil(__half a) { return __half(ceilf((float)a)); }
static __forceinline__ __half htrunc(__half a) { return __half(truncf((float)a)); }
static __forceinline__ __half hrcp(__half a) { return __half(1.0f / (float)a); }
static __forceinline__ __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
static __forceinline__ __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }

// Operators, as cuda_fp16.hpp / cuda_bf16.hpp define them for device code.
static __forceinline__ __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
static __forceinline__ __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
static __forceinline__ __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
static __forceinline__ __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
static __forceinline__ __half operator-(const __half& a) { return __hneg(a); }
static __forceinline__ __half operator+(const __half& a) { return a; }
static __forceinline__ __half& operator+=(__half& a, const __half& b) { return a = __hadd(a, b); }
static __forceinline__ __half& operator-=(__half& a, const __half& b) { return a = __hsub(a, b); }
static __forceinline__ __half& operator*=(__half& a, const __half& b) { return a = __hmul(a, b); }
static __forceinline__ __half& operator/=(__half& a, const __half& b) { return a = __hdiv(a, b); }
static __forceinline__ bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
static __forceinline__ bool operator!=(const __half& a, const __half& b) { return !__heq(a, b); }
static __forceinline__ bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
static __forceinline__ bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
static __forceinline__ bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
static __forceinline__ bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }
static __forceinline__ __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
static __forceinline__ __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
static __forceinline__ __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
static __forceinline__ __half2 operator/(const __half2& a, const __half2& b) { return __hdiv2(a, b); }
static __forceinline__ __half2& operator+=(__half2& a, const __half2& b) { return a = __hadd2(a, b); }
static __forceinline__ __half2& operator*=(__half2& a, const __half2& b) { return a = __hmul2(a, b); }

// Warp shuffles move the bits.
#define GPUBOOK_LOWP_SHUFFLES(T)                                                            \
    static __forceinline__ T __shfl_sync(unsigned m, T v, int src, int w = 32) {            \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL, m, v, src, w);              \
    }                                                                                       \
    static __forceinline__ T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) {      \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_UP, m, v, (int)d, w);        \
    }                                                                                       \
    static __forceinline__ T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) {    \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_DOWN, m, v, (int)d, w);      \
    }                                                                                       \
    static __forceinline__ T __shfl_xor_sync(unsigned m, T v, int lm, int w = 32) {         \
        return ::gpubook::device::shuffle<T>(GPUBOOK_WARP_SHFL_XOR, m, v, lm, w);           \
    }
GPUBOOK_LOWP_SHUFFLES(__half)
GPUBOOK_LOWP_SHUFFLES(__half2)
#undef GPUBOOK_LOWP_SHUFFLES

// Atomic add (sm_70 for __half, sm_80 for bfloat16): a compare-and-swap on the 32-bit word
// holding it, as the GPU did before it had the instruction.
static __forceinline__ __half atomicAdd(__half* p, __half v) {
    uintptr_t a = (uintptr_t)p;
    unsigned* word = (unsigned*)(a & ~(uintptr_t)3);
    unsigned shift = (a & 2) ? 16 : 0;
    unsigned old = *(volatile unsigned*)word, assumed;
    do {
        assumed = old;
        __half cur = __ushort_as_half((unsigned short)(assumed >> shift));
        unsigned sum = __half_as_ushort(__hadd(cur, v));
        unsigned next = (assumed & ~(0xffffu << shift)) | (sum << shift);
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);
    return __ushort_as_half((unsigned short)(old >> shift));
}

#endif
