// CUDA's device math: the C library's float/double functions, CUDA's overloads, its
// integer and bit intrinsics, and the fast-math intrinsics.
//
// We declare libm's functions ourselves instead of including <math.h>: libstdc++'s math.h
// drags in <cmath> and doubles the compile time. The declarations match glibc's (noexcept),
// so a .cu that includes <math.h> anyway still compiles.
#ifndef GPUBOOK_MATH_FUNCTIONS_H
#define GPUBOOK_MATH_FUNCTIONS_H

#define GPUBOOK_LIBM1(F) extern "C" double F(double) noexcept; extern "C" float F##f(float) noexcept;
#define GPUBOOK_LIBM2(F)                                                                        \
    extern "C" double F(double, double) noexcept; extern "C" float F##f(float, float) noexcept;
GPUBOOK_LIBM1(sqrt) GPUBOOK_LIBM1(cbrt) GPUBOOK_LIBM1(exp) GPUBOOK_LIBM1(exp2)
GPUBOOK_LIBM1(expm1) GPUBOOK_LIBM1(log) GPUBOOK_LIBM1(log2) GPUBOOK_LIBM1(log10)
GPUBOOK_LIBM1(log1p) GPUBOOK_LIBM1(sin) GPUBOOK_LIBM1(cos) GPUBOOK_LIBM1(tan)
GPUBOOK_LIBM1(asin) GPUBOOK_LIBM1(acos) GPUBOOK_LIBM1(atan) GPUBOOK_LIBM1(sinh)
GPUBOOK_LIBM1(cosh) GPUBOOK_LIBM1(tanh) GPUBOOK_LIBM1(asinh) GPUBOOK_LIBM1(acosh)
GPUBOOK_LIBM1(atanh) GPUBOOK_LIBM1(fabs) GPUBOOK_LIBM1(floor) GPUBOOK_LIBM1(ceil)
GPUBOOK_LIBM1(round) GPUBOOK_LIBM1(trunc) GPUBOOK_LIBM1(rint) GPUBOOK_LIBM1(nearbyint)
GPUBOOK_LIBM1(erf) GPUBOOK_LIBM1(erfc) GPUBOOK_LIBM1(lgamma) GPUBOOK_LIBM1(tgamma)
GPUBOOK_LIBM1(logb)
GPUBOOK_LIBM2(pow) GPUBOOK_LIBM2(atan2) GPUBOOK_LIBM2(fmin) GPUBOOK_LIBM2(fmax)
GPUBOOK_LIBM2(fmod) GPUBOOK_LIBM2(remainder) GPUBOOK_LIBM2(hypot) GPUBOOK_LIBM2(copysign)
GPUBOOK_LIBM2(fdim) GPUBOOK_LIBM2(nextafter)
#undef GPUBOOK_LIBM1
#undef GPUBOOK_LIBM2
extern "C" double fma(double, double, double) noexcept;
extern "C" float fmaf(float, float, float) noexcept;
extern "C" double ldexp(double, int) noexcept;
extern "C" float ldexpf(float, int) noexcept;
extern "C" double frexp(double, int*) noexcept;
extern "C" float frexpf(float, int*) noexcept;
extern "C" double modf(double, double*) noexcept;
extern "C" float modff(float, float*) noexcept;
extern "C" long lrint(double) noexcept;
extern "C" long lrintf(float) noexcept;
extern "C" long long llrint(double) noexcept;
extern "C" long long llrintf(float) noexcept;
extern "C" long lround(double) noexcept;
extern "C" long lroundf(float) noexcept;
extern "C" long long llround(double) noexcept;
extern "C" long long llroundf(float) noexcept;
extern "C" int abs(int) noexcept;
extern "C" long labs(long) noexcept;
extern "C" long long llabs(long long) noexcept;

// GNU extensions glibc also declares (with _GNU_SOURCE, which g++ defines).
extern "C" void sincosf(float, float*, float*) noexcept;
extern "C" void sincos(double, double*, double*) noexcept;
extern "C" float exp10f(float) noexcept;
extern "C" double exp10(double) noexcept;

// CUDA-only functions.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float sinpif(float x) { return sinf(3.14159265358979f * x); }
static inline float cospif(float x) { return cosf(3.14159265358979f * x); }
static inline double sinpi(double x) { return sin(3.141592653589793 * x); }
static inline double cospi(double x) { return cos(3.141592653589793 * x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }
static inline float fdividef(float a, float b) { return a / b; }
static inline float saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

// CUDA's C++ overloads: sqrt(float) returns float, as with <cmath>. They are templates
// that accept only float so that a .cu which includes <cmath> or <stdlib.h> anyway (whose
// `using std::sqrt;` brings the same overloads into the global namespace) still compiles:
// the library's non-template then wins the tie instead of clashing with ours.
namespace gpubook {
namespace detail {
template <class T> struct only_float {};
template <> struct only_float<float> { typedef float type; };
template <class T> struct only_arith {};
template <> struct only_arith<float> { typedef float type; };
template <> struct only_arith<double> { typedef double type; };
template <> struct only_arith<long long> { typedef long long type; };
template <> struct only_arith<long> { typedef long type; };
} // namespace detail
} // namespace gpubook
#define GPUBOOK_OVERLOAD1(F)                                                                    \
    template <class T> static inline typename ::gpubook::detail::only_float<T>::type F(T x) {    \
        return F##f(x);                                                                         \
    }
#define GPUBOOK_OVERLOAD2(F)                                                                    \
    template <class T>                                                                          \
    static inline typename ::gpubook::detail::only_float<T>::type F(T x, T y) { return F##f(x, y); }
GPUBOOK_OVERLOAD1(sqrt) GPUBOOK_OVERLOAD1(rsqrt) GPUBOOK_OVERLOAD1(cbrt) GPUBOOK_OVERLOAD1(exp)
GPUBOOK_OVERLOAD1(exp2) GPUBOOK_OVERLOAD1(exp10) GPUBOOK_OVERLOAD1(expm1) GPUBOOK_OVERLOAD1(log)
GPUBOOK_OVERLOAD1(log2) GPUBOOK_OVERLOAD1(log10) GPUBOOK_OVERLOAD1(log1p) GPUBOOK_OVERLOAD1(sin)
GPUBOOK_OVERLOAD1(cos) GPUBOOK_OVERLOAD1(tan) GPUBOOK_OVERLOAD1(asin) GPUBOOK_OVERLOAD1(acos)
GPUBOOK_OVERLOAD1(atan) GPUBOOK_OVERLOAD1(sinh) GPUBOOK_OVERLOAD1(cosh) GPUBOOK_OVERLOAD1(tanh)
GPUBOOK_OVERLOAD1(asinh) GPUBOOK_OVERLOAD1(acosh) GPUBOOK_OVERLOAD1(atanh) GPUBOOK_OVERLOAD1(fabs)
GPUBOOK_OVERLOAD1(floor) GPUBOOK_OVERLOAD1(ceil) GPUBOOK_OVERLOAD1(round) GPUBOOK_OVERLOAD1(trunc)
GPUBOOK_OVERLOAD1(rint) GPUBOOK_OVERLOAD1(nearbyint) GPUBOOK_OVERLOAD1(erf) GPUBOOK_OVERLOAD1(erfc)
GPUBOOK_OVERLOAD1(lgamma) GPUBOOK_OVERLOAD1(tgamma)
GPUBOOK_OVERLOAD2(pow) GPUBOOK_OVERLOAD2(atan2) GPUBOOK_OVERLOAD2(fmin) GPUBOOK_OVERLOAD2(fmax)
GPUBOOK_OVERLOAD2(fmod) GPUBOOK_OVERLOAD2(remainder) GPUBOOK_OVERLOAD2(hypot)
GPUBOOK_OVERLOAD2(copysign) GPUBOOK_OVERLOAD2(fdim)
#undef GPUBOOK_OVERLOAD1
#undef GPUBOOK_OVERLOAD2
template <class T>
static inline typename ::gpubook::detail::only_float<T>::type fma(T a, T b, T c) { return fmaf(a, b, c); }
static inline float pow(float x, int n) { return powf(x, (float)n); }
// abs(int) is the C library's; abs of the other arithmetic types as in CUDA.
template <class T> static inline typename ::gpubook::detail::only_arith<T>::type abs(T x) {
    if constexpr (T(0.5) == T(0)) return x < 0 ? -x : x;
    else if constexpr (sizeof(T) == 4) return __builtin_fabsf(x);
    else return __builtin_fabs(x);
}
template <class T> static inline bool isnan(T x) { return __builtin_isnan(x); }
template <class T> static inline bool isinf(T x) { return __builtin_isinf(x); }
template <class T> static inline bool isfinite(T x) { return __builtin_isfinite(x); }
template <class T> static inline bool signbit(T x) { return __builtin_signbit(x); }
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())
#define CUDART_INF_F (__builtin_inff())
#define CUDART_NAN_F (__builtin_nanf(""))
#define CUDART_PI_F 3.141592654f

// min and max: CUDA overloads them for every arithmetic type, mixed types converting as
// the usual arithmetic conversions say (min(int, unsigned) is unsigned). Floats go
// through fminf/fmaxf so a NaN operand loses, as on the GPU.
// (`true ? A() : B()` is a prvalue, so the result type is never a reference.)
template <class A, class B>
static inline auto min(A a, B b) -> decltype(true ? A() : B()) { return b < a ? b : a; }
template <class A, class B>
static inline auto max(A a, B b) -> decltype(true ? A() : B()) { return a < b ? b : a; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a < b ? b : a; }

// Bit manipulation.
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s & 31));
}
static inline int __mul24(int a, int b) { return (int)((a << 8 >> 8) * (b << 8 >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
static inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }

// Reinterpretation and conversions.
static inline float __int_as_float(int x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float x) { int i; __builtin_memcpy(&i, &x, 4); return i; }
static inline float __uint_as_float(unsigned x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float x) { unsigned i; __builtin_memcpy(&i, &x, 4); return i; }
static inline double __longlong_as_double(long long x) { double d; __builtin_memcpy(&d, &x, 8); return d; }
static inline long long __double_as_longlong(double x) { long long i; __builtin_memcpy(&i, &x, 8); return i; }
static inline int __float2int_rn(float x) { return (int)rintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)rintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline long long __float2ll_rn(float x) { return (long long)rintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline int __double2int_rn(double x) { return (int)rint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }

// Fast-math intrinsics. Macros, not functions: glibc declares several of these names
// (__expf, __logf, __sinf ...) as its own internal functions. The CPU runs the accurate
// versions, so results can differ from a GPU in the last bits.
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf(x, y)
#define __sincosf(x, s, c) sincosf(x, s, c)
#define __fdividef(a, b) ((float)(a) / (float)(b))
#define __fdiv_rn(a, b) ((float)(a) / (float)(b))
#define __frcp_rn(x) (1.0f / (float)(x))
#define __fsqrt_rn(x) sqrtf(x)
#define __frsqrt_rn(x) rsqrtf(x)
#define __saturatef(x) saturatef(x)
#define __fadd_rn(a, b) ((float)(a) + (float)(b))
#define __fsub_rn(a, b) ((float)(a) - (float)(b))
#define __fmul_rn(a, b) ((float)(a) * (float)(b))
#define __fmaf_rn(a, b, c) fmaf(a, b, c)
#define __fadd_rz(a, b) ((float)(a) + (float)(b))
#define __fmul_rz(a, b) ((float)(a) * (float)(b))
#define __dadd_rn(a, b) ((double)(a) + (double)(b))
#define __dmul_rn(a, b) ((double)(a) * (double)(b))
#define __fma_rn(a, b, c) fma(a, b, c)

#endif
