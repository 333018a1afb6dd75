// The atomic builtins of a check-mode kernel (__atomic_*, which the device header's
// __nv_atomic_* and CUDA atomics of other widths use): -fsanitize=thread turns each into a call
// to __tsan_atomicN_OP with the memory order, which lands here. Each is checked like a load or
// store, then done for real. Stores with release order publish what the block wrote before
// them; every atomic read is a place where a thread may be waiting for another.
#include "access/checks.h"
#include "worker.h"

#include <cstdint>

using namespace gpubook::rt;

namespace {

enum { kRelaxed, kConsume, kAcquire, kRelease, kAcqRel, kSeqCst };

bool releases(int mo) { return mo == kRelease || mo == kAcqRel || mo == kSeqCst; }

inline uintptr_t pc_of(void* ra) { return call_site(ra); }

// Before the operation: checks, and the never-written check for operations that read.
template <class T> void before(const volatile T* a, bool write, bool rmw, bool reads, int mo, uintptr_t pc) {
    uintptr_t p = reinterpret_cast<uintptr_t>(a);
    if (reads) check_atomic_read(p, sizeof(T), pc);
    unsigned f = kAccessSync | kAccessAligned;
    if (write) f |= kAccessWrite;
    if (rmw) f |= kAccessRmw;
    if (write && releases(mo)) f |= kAccessRelease;
    check_access(p, sizeof(T), f, pc);
}

template <class T> void after_read(const volatile T* a, T seen, uintptr_t pc) {
    uint64_t bits = 0;
    __builtin_memcpy(&bits, &seen, sizeof(T) < 8 ? sizeof(T) : 8);
    if (Worker* w = tls_worker; w && w->blk) spin_point(*w, pc, reinterpret_cast<uintptr_t>(a), bits);
}

template <class T> T load(const volatile T* a, int mo, uintptr_t pc) {
    before(a, false, false, true, mo, pc);
    T v = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    after_read(a, v, pc);
    return v;
}

template <class T> void store(volatile T* a, T v, int mo, uintptr_t pc) {
    before(a, true, false, false, mo, pc);
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

template <class T, class F> T rmw(volatile T* a, int mo, bool reads, uintptr_t pc, F op) {
    before(a, true, true, reads, mo, pc);
    T old = op();
    after_read(a, old, pc);
    return old;
}

template <class T> bool cas(volatile T* a, T* expected, T v, int mo, uintptr_t pc) {
    before(a, true, true, true, mo, pc);
    T want = *expected;
    bool ok = __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    after_read(a, ok ? want : *expected, pc);
    return ok;
}

} // namespace

#define GPUBOOK_TSAN_ATOMICS(BITS, T)                                                                        \
    extern "C" T __tsan_atomic##BITS##_load(const volatile T* a, int mo) {                                   \
        return load(a, mo, pc_of(__builtin_return_address(0)));                                              \
    }                                                                                                        \
    extern "C" void __tsan_atomic##BITS##_store(volatile T* a, T v, int mo) {                                \
        store(a, v, mo, pc_of(__builtin_return_address(0)));                                                 \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_exchange(volatile T* a, T v, int mo) {                                \
        return rmw(a, mo, false, pc_of(__builtin_return_address(0)),                                         \
                   [&] { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); });                             \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_add(volatile T* a, T v, int mo) {                               \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); });                              \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_sub(volatile T* a, T v, int mo) {                               \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); });                              \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_and(volatile T* a, T v, int mo) {                               \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); });                              \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_or(volatile T* a, T v, int mo) {                                \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); });                               \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_xor(volatile T* a, T v, int mo) {                               \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); });                              \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_fetch_nand(volatile T* a, T v, int mo) {                              \
        return rmw(a, mo, true, pc_of(__builtin_return_address(0)),                                          \
                   [&] { return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST); });                             \
    }                                                                                                        \
    extern "C" int __tsan_atomic##BITS##_compare_exchange_strong(volatile T* a, T* c, T v, int mo, int) {    \
        return cas(a, c, v, mo, pc_of(__builtin_return_address(0)));                                         \
    }                                                                                                        \
    extern "C" int __tsan_atomic##BITS##_compare_exchange_weak(volatile T* a, T* c, T v, int mo, int) {      \
        return cas(a, c, v, mo, pc_of(__builtin_return_address(0)));                                         \
    }                                                                                                        \
    extern "C" T __tsan_atomic##BITS##_compare_exchange_val(volatile T* a, T c, T v, int mo, int) {          \
        T expected = c;                                                                                      \
        cas(a, &expected, v, mo, pc_of(__builtin_return_address(0)));                                        \
        return expected;                                                                                     \
    }
GPUBOOK_TSAN_ATOMICS(8, uint8_t)
GPUBOOK_TSAN_ATOMICS(16, uint16_t)
GPUBOOK_TSAN_ATOMICS(32, uint32_t)
GPUBOOK_TSAN_ATOMICS(64, uint64_t)
#undef GPUBOOK_TSAN_ATOMICS

// A fence with release order is __threadfence()'s (the device header calls us directly).
extern "C" void __tsan_atomic_thread_fence(int mo) {
    if (mo != kRelaxed) gpubook_rt_threadfence();
}
extern "C" void __tsan_atomic_signal_fence(int) {}
