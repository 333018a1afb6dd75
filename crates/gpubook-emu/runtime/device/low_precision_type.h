// The body both cuda_fp16.h and cuda_bf16.h expand: a 16-bit float type and its pair with the
// conversions, arithmetic and comparison intrinsics kernels use, operators, warp shuffles and
// atomicAdd. Included once by each, with these macros set (and undefined after):
//   GPUBOOK_LP_T, GPUBOOK_LP_T2, GPUBOOK_LP_RAW   the types (__half, __half2, __half_raw)
//   GPUBOOK_LP_N, GPUBOOK_LP_N2                   the names in the intrinsics (half, half2:
//                                                 __float2half, __half22float2 ...)
//   GPUBOOK_LP_FROM_FLOAT, GPUBOOK_LP_TO_FLOAT    bits <-> float (device/low_precision.h)
//   GPUBOOK_LP_INF_BITS                           the bits of +infinity
// No include guard: the including header has one.
#define GPUBOOK_LP_CAT(a, b, c) GPUBOOK_LP_CAT_(a, b, c)
#define GPUBOOK_LP_CAT_(a, b, c) a##b##c

struct GPUBOOK_LP_RAW {
    unsigned short x;
};
struct GPUBOOK_LP_T {
    unsigned short __x;
    GPUBOOK_LP_T() = default;
    __host__ __device__ GPUBOOK_LP_T(float f) : __x(GPUBOOK_LP_FROM_FLOAT(f)) {}
    __host__ __device__ GPUBOOK_LP_T(double f) : __x(GPUBOOK_LP_FROM_FLOAT((float)f)) {}
    __host__ __device__ GPUBOOK_LP_T(int i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(unsigned i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(long long i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(short i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(unsigned short i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(long i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(unsigned long i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(unsigned long long i) : __x(GPUBOOK_LP_FROM_FLOAT((float)i)) {}
    __host__ __device__ GPUBOOK_LP_T(const GPUBOOK_LP_RAW& r) : __x(r.x) {}
    __host__ __device__ operator float() const { return GPUBOOK_LP_TO_FLOAT(__x); }
    __host__ __device__ operator GPUBOOK_LP_RAW() const { return GPUBOOK_LP_RAW{__x}; }
};
struct __attribute__((aligned(4))) GPUBOOK_LP_T2 {
    GPUBOOK_LP_T x, y;
    GPUBOOK_LP_T2() = default;
    __host__ __device__ GPUBOOK_LP_T2(GPUBOOK_LP_T a, GPUBOOK_LP_T b) : x(a), y(b) {}
};

// Conversions.
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__float2, GPUBOOK_LP_N,)(float f) { return GPUBOOK_LP_T(f); }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__float2, GPUBOOK_LP_N, _rn)(float f) { return GPUBOOK_LP_T(f); }
static __forceinline__ float GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, 2float)(GPUBOOK_LP_T h) { return (float)h; }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__double2, GPUBOOK_LP_N,)(double d) { return GPUBOOK_LP_T((float)d); }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__int2, GPUBOOK_LP_N, _rn)(int i) { return GPUBOOK_LP_T((float)i); }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__uint2, GPUBOOK_LP_N, _rn)(unsigned i) { return GPUBOOK_LP_T((float)i); }
static __forceinline__ int GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, 2int_rz)(GPUBOOK_LP_T h) { return (int)(float)h; }
static __forceinline__ int GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, 2int_rn)(GPUBOOK_LP_T h) { return __float2int_rn((float)h); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__float2, GPUBOOK_LP_N2, _rn)(float f) { return GPUBOOK_LP_T2(GPUBOOK_LP_T(f), GPUBOOK_LP_T(f)); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__floats2, GPUBOOK_LP_N2, _rn)(float a, float b) { return GPUBOOK_LP_T2(GPUBOOK_LP_T(a), GPUBOOK_LP_T(b)); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__float22, GPUBOOK_LP_N2, _rn)(float2 v) { return GPUBOOK_LP_T2(GPUBOOK_LP_T(v.x), GPUBOOK_LP_T(v.y)); }
static __forceinline__ float2 GPUBOOK_LP_CAT(__, GPUBOOK_LP_N2, 2float2)(GPUBOOK_LP_T2 v) { return make_float2((float)v.x, (float)v.y); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, GPUBOOK_LP_CAT(2, GPUBOOK_LP_N2,))(GPUBOOK_LP_T h) { return GPUBOOK_LP_T2(h, h); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__halves2, GPUBOOK_LP_N2,)(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return GPUBOOK_LP_T2(a, b); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(make_, GPUBOOK_LP_N2,)(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return GPUBOOK_LP_T2(a, b); }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__low2, GPUBOOK_LP_N,)(GPUBOOK_LP_T2 v) { return v.x; }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__high2, GPUBOOK_LP_N,)(GPUBOOK_LP_T2 v) { return v.y; }
static __forceinline__ float __low2float(GPUBOOK_LP_T2 v) { return (float)v.x; }
static __forceinline__ float __high2float(GPUBOOK_LP_T2 v) { return (float)v.y; }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__lows2, GPUBOOK_LP_N2,)(GPUBOOK_LP_T2 a, GPUBOOK_LP_T2 b) { return GPUBOOK_LP_T2(a.x, b.x); }
static __forceinline__ GPUBOOK_LP_T2 GPUBOOK_LP_CAT(__highs2, GPUBOOK_LP_N2,)(GPUBOOK_LP_T2 a, GPUBOOK_LP_T2 b) { return GPUBOOK_LP_T2(a.y, b.y); }
static __forceinline__ short GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, _as_short)(GPUBOOK_LP_T h) { return (short)h.__x; }
static __forceinline__ unsigned short GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, _as_ushort)(GPUBOOK_LP_T h) { return h.__x; }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__short_as_, GPUBOOK_LP_N,)(short s) { GPUBOOK_LP_T h; h.__x = (unsigned short)s; return h; }
static __forceinline__ GPUBOOK_LP_T GPUBOOK_LP_CAT(__ushort_as_, GPUBOOK_LP_N,)(unsigned short s) { GPUBOOK_LP_T h; h.__x = s; return h; }

// Arithmetic: in float, rounded once to the 16-bit type.
#define GPUBOOK_LOWP_BINARY(NAME, EXPR)                                                     \
    static __forceinline__ GPUBOOK_LP_T NAME(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { float x = (float)a, y = (float)b; return GPUBOOK_LP_T(EXPR); } \
    static __forceinline__ GPUBOOK_LP_T2 NAME##2(GPUBOOK_LP_T2 a, GPUBOOK_LP_T2 b) { return GPUBOOK_LP_T2(NAME(a.x, b.x), NAME(a.y, b.y)); }
GPUBOOK_LOWP_BINARY(__hadd, x + y)
GPUBOOK_LOWP_BINARY(__hsub, x - y)
GPUBOOK_LOWP_BINARY(__hmul, x * y)
GPUBOOK_LOWP_BINARY(__hdiv, x / y)
GPUBOOK_LOWP_BINARY(__hmax, fmaxf(x, y))
GPUBOOK_LOWP_BINARY(__hmin, fminf(x, y))
#undef GPUBOOK_LOWP_BINARY
static __forceinline__ GPUBOOK_LP_T __hfma(GPUBOOK_LP_T a, GPUBOOK_LP_T b, GPUBOOK_LP_T c) { return GPUBOOK_LP_T(fmaf((float)a, (float)b, (float)c)); }
static __forceinline__ GPUBOOK_LP_T2 __hfma2(GPUBOOK_LP_T2 a, GPUBOOK_LP_T2 b, GPUBOOK_LP_T2 c) { return GPUBOOK_LP_T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
static __forceinline__ GPUBOOK_LP_T __hneg(GPUBOOK_LP_T a) { return GPUBOOK_LP_CAT(__ushort_as_, GPUBOOK_LP_N,)((unsigned short)(a.__x ^ 0x8000u)); }
static __forceinline__ GPUBOOK_LP_T2 __hneg2(GPUBOOK_LP_T2 a) { return GPUBOOK_LP_T2(__hneg(a.x), __hneg(a.y)); }
static __forceinline__ GPUBOOK_LP_T __habs(GPUBOOK_LP_T a) { return GPUBOOK_LP_CAT(__ushort_as_, GPUBOOK_LP_N,)((unsigned short)(a.__x & 0x7fffu)); }
static __forceinline__ GPUBOOK_LP_T2 __habs2(GPUBOOK_LP_T2 a) { return GPUBOOK_LP_T2(__habs(a.x), __habs(a.y)); }
static __forceinline__ bool __hisnan(GPUBOOK_LP_T a) { float f = (float)a; return f != f; }
static __forceinline__ bool __hisinf(GPUBOOK_LP_T a) { return (a.__x & 0x7fffu) == GPUBOOK_LP_INF_BITS; }
// Comparisons (ordered: false when either is NaN, except __hne's unordered cousin).
static __forceinline__ bool __heq(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a == (float)b; }
static __forceinline__ bool __hne(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a < (float)b || (float)a > (float)b; }
static __forceinline__ bool __hlt(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a < (float)b; }
static __forceinline__ bool __hle(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a <= (float)b; }
static __forceinline__ bool __hgt(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a > (float)b; }
static __forceinline__ bool __hge(GPUBOOK_LP_T a, GPUBOOK_LP_T b) { return (float)a >= (float)b; }
// Math on the 16-bit type (the h-prefixed functions), in float.
static __forceinline__ GPUBOOK_LP_T hsqrt(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(sqrtf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hrsqrt(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(1.0f / sqrtf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hexp(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(expf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hlog(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(logf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hfloor(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(floorf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hceil(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(ceilf((float)a)); }
static __forceinline__ GPUBOOK_LP_T htrunc(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(truncf((float)a)); }
static __forceinline__ GPUBOOK_LP_T hrcp(GPUBOOK_LP_T a) { return GPUBOOK_LP_T(1.0f / (float)a); }
static __forceinline__ GPUBOOK_LP_T2 h2sqrt(GPUBOOK_LP_T2 a) { return GPUBOOK_LP_T2(hsqrt(a.x), hsqrt(a.y)); }
static __forceinline__ GPUBOOK_LP_T2 h2exp(GPUBOOK_LP_T2 a) { return GPUBOOK_LP_T2(hexp(a.x), hexp(a.y)); }

// Operators, as cuda_fp16.hpp / cuda_bf16.hpp define them for device code.
static __forceinline__ GPUBOOK_LP_T operator+(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hadd(a, b); }
static __forceinline__ GPUBOOK_LP_T operator-(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hsub(a, b); }
static __forceinline__ GPUBOOK_LP_T operator*(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hmul(a, b); }
static __forceinline__ GPUBOOK_LP_T operator/(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hdiv(a, b); }
static __forceinline__ GPUBOOK_LP_T operator-(const GPUBOOK_LP_T& a) { return __hneg(a); }
static __forceinline__ GPUBOOK_LP_T operator+(const GPUBOOK_LP_T& a) { return a; }
static __forceinline__ GPUBOOK_LP_T& operator+=(GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return a = __hadd(a, b); }
static __forceinline__ GPUBOOK_LP_T& operator-=(GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return a = __hsub(a, b); }
static __forceinline__ GPUBOOK_LP_T& operator*=(GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return a = __hmul(a, b); }
static __forceinline__ GPUBOOK_LP_T& operator/=(GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return a = __hdiv(a, b); }
static __forceinline__ bool operator==(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __heq(a, b); }
static __forceinline__ bool operator!=(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return !__heq(a, b); }
static __forceinline__ bool operator<(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hlt(a, b); }
static __forceinline__ bool operator<=(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hle(a, b); }
static __forceinline__ bool operator>(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hgt(a, b); }
static __forceinline__ bool operator>=(const GPUBOOK_LP_T& a, const GPUBOOK_LP_T& b) { return __hge(a, b); }
static __forceinline__ GPUBOOK_LP_T2 operator+(const GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return __hadd2(a, b); }
static __forceinline__ GPUBOOK_LP_T2 operator-(const GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return __hsub2(a, b); }
static __forceinline__ GPUBOOK_LP_T2 operator*(const GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return __hmul2(a, b); }
static __forceinline__ GPUBOOK_LP_T2 operator/(const GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return __hdiv2(a, b); }
static __forceinline__ GPUBOOK_LP_T2& operator+=(GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return a = __hadd2(a, b); }
static __forceinline__ GPUBOOK_LP_T2& operator*=(GPUBOOK_LP_T2& a, const GPUBOOK_LP_T2& b) { return a = __hmul2(a, b); }

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
GPUBOOK_LOWP_SHUFFLES(GPUBOOK_LP_T)
GPUBOOK_LOWP_SHUFFLES(GPUBOOK_LP_T2)
#undef GPUBOOK_LOWP_SHUFFLES

// Atomic add (sm_70 for GPUBOOK_LP_T, sm_80 for bfloat16): a compare-and-swap on the 32-bit word
// holding it, as the GPU did before it had the instruction.
static __forceinline__ GPUBOOK_LP_T atomicAdd(GPUBOOK_LP_T* p, GPUBOOK_LP_T v) {
    uintptr_t a = (uintptr_t)p;
    unsigned* word = (unsigned*)(a & ~(uintptr_t)3);
    unsigned shift = (a & 2) ? 16 : 0;
    unsigned old = *(volatile unsigned*)word, assumed;
    do {
        assumed = old;
        GPUBOOK_LP_T cur = GPUBOOK_LP_CAT(__ushort_as_, GPUBOOK_LP_N,)((unsigned short)(assumed >> shift));
        unsigned sum = GPUBOOK_LP_CAT(__, GPUBOOK_LP_N, _as_ushort)(__hadd(cur, v));
        unsigned next = (assumed & ~(0xffffu << shift)) | (sum << shift);
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);
    return GPUBOOK_LP_CAT(__ushort_as_, GPUBOOK_LP_N,)((unsigned short)(old >> shift));
}

#undef GPUBOOK_LP_CAT
#undef GPUBOOK_LP_CAT_
