// <assert.h> (and <cassert>, which includes it) for kernels: the device's assert, which ends the
// launch with a "trap" diagnostic at the kernel's line, rather than glibc's, which would abort
// the worker from inside the C library. It sits first on the kernels' include path.
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
extern "C" void gpubook_rt_assert_fail(const char* expr, const char* file, int line, const char* func)
    __attribute__((noreturn));
#define assert(e) ((e) ? (void)0 : gpubook_rt_assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
