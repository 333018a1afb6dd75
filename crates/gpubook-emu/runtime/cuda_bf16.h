// cuda_bf16.h for gpubook's CPU emulator: __nv_bfloat16 and __nv_bfloat162 with the conversions, arithmetic and
// comparison intrinsics kernels use, operators, and warp shuffles. Stored as bits; see
// device/low_precision.h for the rounding. Generated with its sibling from one template (the
// same text with the names swapped), so the two stay alike.
#ifndef GPUBOOK_CUDA_BF16_H
#define GPUBOOK_CUDA_BF16_H

#include "device/low_precision.h"

struct __nv_bfloat16_raw {
    unsigned short x;
};
struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __host__ __device__ __nv_bfloat16(float f) : __x(::gpubook::lowp::float_to_bf16(f)) {}
    __host__ __device__ __nv_bfloat16(double f) : __x(::gpubook::lowp::float_to_bf16((float)f)) {}
    __host__ __device__ __nv_bfloat16(int i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(unsigned i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(long long i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(short i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(unsigned short i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(long i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(unsigned long i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(unsigned long long i) : __x(::gpubook::lowp::float_to_bf16((float)i)) {}
    __host__ __device__ __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
    __host__ __device__ operator float() const { return ::gpubook::lowp::bf16_to_float(__x); }
    __host__ __device__ operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    __host__ __device__ __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

// Conversions.
static __forceinline__ __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static __forceinline__ float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
static __forceinline__ __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16((float)d); }
static __forceinline__ __nv_bfloat16 __int2bfloat16_rn(int i) { return __nv_bfloat16((float)i); }
static __forceinline__ __nv_bfloat16 __uint2bfloat16_rn(unsigned i) { return __nv_bfloat16((float)i); }
static __forceinline__ int __bfloat162int_rz(__nv_bfloat16 h) { return (int)(float)h; }
static __forceinline__ int __bfloat162int_rn(__nv_bfloat16 h) { return __float2int_rn((float)h); }
static __forceinline__ __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
static __forceinline__ __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
static __forceinline__ __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __nv_bfloat162(__nv_bfloat16(v.x), __nv_bfloat16(v.y)); }
static __forceinline__ float2 __bfloat1622float2(__nv_bfloat162 v) { return make_float2((float)v.x, (float)v.y); }
static __forceinline__ __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 h) { return __nv_bfloat162(h, h); }
static __forceinline__ __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static __forceinline__ __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static __forceinline__ __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
static __forceinline__ __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
static __forceinline__ float __low2float(__nv_bfloat162 v) { return (float)v.x; }
static __forceinline__ float __high2float(__nv_bfloat162 v) { return (float)v.y; }
static __forceinline__ __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static __forceinline__ __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static __forceinline__ short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static __forceinline__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static __forceinline__ __nv_bfloat16 __short_as_bfloat16(short s) { __nv_bfloat16 h; h.__x = (unsigned short)s; return h; }
static __forceinline__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { __nv_bfloat16 h; h.__x = s; return h; }

// Arithmetic: in float, rounded once to __nv_bfloat16.
#define GPUBOOK_LOWP_BINARY(NAME, EXPR)                                                     \
    static __forceinline__ __nv_bfloat16 NAME(__nv_bfloat16 a, __nv_bfloat16 b) { float x = (float)a, y = (float)b; return __nv_bfloat16(EXPR); } \
    static __forceinline__ __nv_bfloat162 NAME##2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(NAME(a.x, b.x), NAME(a.y, b.y)); }
GPUBOOK_LOWP_BINARY(__hadd, x + y)
GPUBOOK_LOWP_BINARY(__hsub, x - y)
GPUBOOK_LOWP_BINARY(__hmul, x * y)
GPUBOOK_LOWP_BINARY(__hdiv, x / y)
GPUBOOK_LOWP_BINARY(__hmax, fmaxf(x, y))
GPUBOOK_LOWP_BINARY(__hmin, fminf(x, y))
#undef GPUBOOK_LOWP_BINARY
static __forceinline__ __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { return __nv_bfloat16(fmaf((float)a, (float)b, (float)c)); }
static __forceinline__ __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) { return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
static __forceinline__ __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ushort_as_bfloat16((unsigned short)(a.__x ^ 0x8000u)); }
static __forceinline__ __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return __nv_bfloat162(__hneg(a.x), __hneg(a.y)); }
static __forceinline__ __nv_bfloat16 __habs(__nv_bfloat16 a) { return __ushort_as_bfloat16((unsigned short)(a.__x & 0x7fffu)); }
static __forceinline__ __nv_bfloat162 __habs2(__nv_bfloat162 a) { return __nv_bfloat162(__habs(a.x), __habs(a.y)); }
static __forceinline__ bool __hisnan(__nv_bfloat16 a) { float f = (float)a; return f != f; }
static __forceinline__ bool __hisinf(__nv_bfloat16 a) { return (a.__x & 0x7fffu) == 0x7f80u; }
// Comparisons (ordered: false when either is NaN, except __hne's unordered cousin).
static __forceinline__ bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a == (float)b; }
static __forceinline__ bool __hne(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a < (float)b || (float)a > (float)b; }
static __forceinline__ bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a < (float)b; }
static __forceinline__ bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a <= (float)b; }
static __forceinline__ bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a > (float)b; }
static __forceinline__ bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a >= (float)b; }
// Math on __nv_bfloat16 (the h-prefixed functions), in float.
static __forceinline__ __nv_bfloat16 hsqrt(__nv_bfloat16 a) { return __nv_bfloat16(sqrtf((float)a)); }
static __forceinline__ __nv_bfloat16 hrsqrt(__nv_bfloat16 a) { return __nv_bfloat16(1.0f / sqrtf((float)a)); }
static __forceinline__ __nv_bfloat16 hexp(__nv_bfloat16 a) { return __nv_bfloat16(expf((float)a)); }
static __forceinline__ __nv_bfloat16 hlog(__nv_bfloat16 a) { return __nv_bfloat16(logf((float)a)); }
static __forceinline__ __nv_bfloat16 hfloor(__nv_bfloat16 a) { return __nv_bfloat16(floorf((float)a)); }
static __forceinline__ __nv_bfloat16 hceil(__nv_bfloat16 a) { return __nv_bfloat16(ceilf((float)a)); }
static __forceinline__ __nv_bfloat16 htrunc(__nv_bfloat16 a) { return __nv_bfloat16(truncf((float)a)); }
static __forceinline__ __nv_bfloat16 hrcp(__nv_bfloat16 a) { return __nv_bfloat16(1.0f / (float)a); }
static __forceinline__ __nv_bfloat162 h2sqrt(__nv_bfloat162 a) { return __nv_bfloat162(hsqrt(a.x), hsqrt(a.y)); }
static __forceinline__ __nv_bfloat162 h2exp(__nv_bfloat162 a) { return __nv_bfloat162(hexp(a.x), hexp(a.y)); }

// Operators, as cuda_fp16.hpp / cuda_bf16.hpp define them for device code.
static __forceinline__ __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hadd(a, b); }
static __forceinline__ __nv_bfloat16 operator-(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hsub(a, b); }
static __forceinline__ __nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
static __forceinline__ __nv_bfloat16 operator/(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hdiv(a, b); }
static __forceinline__ __nv_bfloat16 operator-(const __nv_bfloat16& a) { return __hneg(a); }
static __forceinline__ __nv_bfloat16 operator+(const __nv_bfloat16& a) { return a; }
static __forceinline__ __nv_bfloat16& operator+=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hadd(a, b); }
static __forceinline__ __nv_bfloat16& operator-=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hsub(a, b); }
static __forceinline__ __nv_bfloat16& operator*=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hmul(a, b); }
static __forceinline__ __nv_bfloat16& operator/=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hdiv(a, b); }
static __forceinline__ bool operator==(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __heq(a, b); }
static __forceinline__ bool operator!=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return !__heq(a, b); }
static __forceinline__ bool operator<(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hlt(a, b); }
static __forceinline__ bool operator<=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hle(a, b); }
static __forceinline__ bool operator>(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hgt(a, b); }
static __forceinline__ bool operator>=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hge(a, b); }
static __forceinline__ __nv_bfloat162 operator+(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hadd2(a, b); }
static __forceinline__ __nv_bfloat162 operator-(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hsub2(a, b); }
static __forceinline__ __nv_bfloat162 operator*(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hmul2(a, b); }
static __forceinline__ __nv_bfloat162 operator/(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hdiv2(a, b); }
static __forceinline__ __nv_bfloat162& operator+=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hadd2(a, b); }
static __forceinline__ __nv_bfloat162& operator*=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hmul2(a, b); }

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
GPUBOOK_LOWP_SHUFFLES(__nv_bfloat16)
GPUBOOK_LOWP_SHUFFLES(__nv_bfloat162)
#undef GPUBOOK_LOWP_SHUFFLES

// Atomic add (sm_70 for __half, sm_80 for bfloat16): a compare-and-swap on the 32-bit word
// holding it, as the GPU did before it had the instruction.
static __forceinline__ __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
    uintptr_t a = (uintptr_t)p;
    unsigned* word = (unsigned*)(a & ~(uintptr_t)3);
    unsigned shift = (a & 2) ? 16 : 0;
    unsigned old = *(volatile unsigned*)word, assumed;
    do {
        assumed = old;
        __nv_bfloat16 cur = __ushort_as_bfloat16((unsigned short)(assumed >> shift));
        unsigned sum = __bfloat16_as_ushort(__hadd(cur, v));
        unsigned next = (assumed & ~(0xffffu << shift)) | (sum << shift);
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);
    return __ushort_as_bfloat16((unsigned short)(old >> shift));
}

#endif
