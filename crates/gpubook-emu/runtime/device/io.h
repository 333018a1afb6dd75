// printf, assert, __trap, clocks, and the cache-hint loads.
#ifndef GPUBOOK_IO_H
#define GPUBOOK_IO_H

// Kernel printf goes to the worker's stdout, which the host forwards to its own.
extern "C" int printf(const char* __restrict fmt, ...);

// assert() and __trap() end the launch with a diagnostic of class "trap", as a GPU ends
// the kernel with an error. A .cu that includes <assert.h> gets glibc's assert, which
// aborts; the worker reports that as a trap too.
#ifndef assert
#define assert(e) ((e) ? (void)0 : gpubook_rt_assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
static __forceinline__ void __trap() { gpubook_rt_trap(); }
static __forceinline__ void __brkpt() { gpubook_rt_trap(); }

// clock() is the C library's (same type as glibc's declaration); clock64() reads the
// CPU's cycle counter.
typedef long clock_t; // glibc's type, so <time.h> may be included too
extern "C" clock_t clock(void) noexcept;
static __forceinline__ long long clock64() {
#if defined(__x86_64__)
    return (long long)__builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    long long v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return (long long)clock();
#endif
}

// Cache-hinted loads and stores are plain memory accesses on the CPU.
template <class T> static __forceinline__ T __ldg(const T* p) { return *p; }
template <class T> static __forceinline__ T __ldcg(const T* p) { return *p; }
template <class T> static __forceinline__ T __ldca(const T* p) { return *p; }
template <class T> static __forceinline__ T __ldcs(const T* p) { return *p; }
template <class T> static __forceinline__ T __ldlu(const T* p) { return *p; }
template <class T> static __forceinline__ T __ldcv(const T* p) { return *p; }
template <class T> static __forceinline__ void __stcg(T* p, T v) { *p = v; }
template <class T> static __forceinline__ void __stcs(T* p, T v) { *p = v; }
template <class T> static __forceinline__ void __stwb(T* p, T v) { *p = v; }
template <class T> static __forceinline__ void __stwt(T* p, T v) { *p = v; }

#endif
