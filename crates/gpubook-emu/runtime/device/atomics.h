// CUDA's atomic functions.
//
// Check mode routes every atomic through the worker (gpubook_rt_atomic) so the bounds and
// race checkers know the access is atomic; fast mode uses the compiler's __atomic builtins
// inline. Both return the old value, as CUDA's do.
#ifndef GPUBOOK_ATOMICS_H
#define GPUBOOK_ATOMICS_H

namespace gpubook {
namespace device {
template <class T> struct atomic_type;
template <> struct atomic_type<int> { enum { value = GPUBOOK_T_I32 }; };
template <> struct atomic_type<unsigned> { enum { value = GPUBOOK_T_U32 }; };
template <> struct atomic_type<long long> { enum { value = GPUBOOK_T_I64 }; };
template <> struct atomic_type<unsigned long long> { enum { value = GPUBOOK_T_U64 }; };
template <> struct atomic_type<float> { enum { value = GPUBOOK_T_F32 }; };
template <> struct atomic_type<double> { enum { value = GPUBOOK_T_F64 }; };

template <class T> static __forceinline__ uint64_t to_bits(T v) {
    uint64_t b = 0;
    __builtin_memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> static __forceinline__ T from_bits(uint64_t b) {
    T v;
    __builtin_memcpy(&v, &b, sizeof(T));
    return v;
}

#if defined(GPUBOOK_CHECK)
template <class T>
static __forceinline__ T atomic(int op, T* p, T v, T cmp = T()) {
    return from_bits<T>(gpubook_rt_atomic(op, atomic_type<T>::value, (void*)p, to_bits(v), to_bits(cmp)));
}
#else
// Fast mode: a compare-and-swap loop around the new value that `next` computes.
template <class T, class F>
static __forceinline__ T cas_loop(T* p, F next) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, next(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
// float and double have no fetch_add: loop over their bits.
template <class B, class T>
static __forceinline__ T float_cas_loop(T* p, T v, int op) {
    B* q = (B*)p;
    B old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
        T cur = from_bits<T>((uint64_t)old);
        T nxt = op == GPUBOOK_ATOM_ADD ? cur + v : v; // add or exchange
        if (__atomic_compare_exchange_n(q, &old, (B)to_bits(nxt), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return cur;
    }
}
template <class T>
static __forceinline__ T atomic(int op, T* p, T v, T cmp = T()) {
    if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) {
        return float_cas_loop<unsigned>(p, v, op);
    } else if constexpr (sizeof(T) == 8 && T(0.5) != T(0)) {
        return float_cas_loop<unsigned long long>(p, v, op);
    } else {
        switch (op) {
        case GPUBOOK_ATOM_ADD: return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_SUB: return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_EXCH: return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_AND: return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_OR: return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_XOR: return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
        case GPUBOOK_ATOM_MIN: return cas_loop(p, [v](T o) { return v < o ? v : o; });
        case GPUBOOK_ATOM_MAX: return cas_loop(p, [v](T o) { return v > o ? v : o; });
        case GPUBOOK_ATOM_INC: return cas_loop(p, [v](T o) { return o >= v ? T(0) : T(o + 1); });
        case GPUBOOK_ATOM_DEC: return cas_loop(p, [v](T o) { return (o == 0 || o > v) ? v : T(o - 1); });
        default: { // CAS: returns the old value whether or not it swapped
            T expected = cmp;
            __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            return expected;
        }
        }
    }
}
#endif
} // namespace device
} // namespace gpubook

#define GPUBOOK_ATOMIC(NAME, OP, T)                                                          \
    static __forceinline__ T NAME(T* p, T v) { return ::gpubook::device::atomic<T>(OP, p, v); } \
    static __forceinline__ T NAME##_block(T* p, T v) { return NAME(p, v); }                   \
    static __forceinline__ T NAME##_system(T* p, T v) { return NAME(p, v); }
#define GPUBOOK_ATOMIC_INTS(NAME, OP)                                                        \
    GPUBOOK_ATOMIC(NAME, OP, int) GPUBOOK_ATOMIC(NAME, OP, unsigned)                          \
    GPUBOOK_ATOMIC(NAME, OP, unsigned long long)

GPUBOOK_ATOMIC_INTS(atomicAdd, GPUBOOK_ATOM_ADD)
GPUBOOK_ATOMIC(atomicAdd, GPUBOOK_ATOM_ADD, float)
GPUBOOK_ATOMIC(atomicAdd, GPUBOOK_ATOM_ADD, double)
GPUBOOK_ATOMIC(atomicSub, GPUBOOK_ATOM_SUB, int)
GPUBOOK_ATOMIC(atomicSub, GPUBOOK_ATOM_SUB, unsigned)
GPUBOOK_ATOMIC_INTS(atomicExch, GPUBOOK_ATOM_EXCH)
GPUBOOK_ATOMIC(atomicExch, GPUBOOK_ATOM_EXCH, float)
GPUBOOK_ATOMIC_INTS(atomicMin, GPUBOOK_ATOM_MIN)
GPUBOOK_ATOMIC(atomicMin, GPUBOOK_ATOM_MIN, long long)
GPUBOOK_ATOMIC_INTS(atomicMax, GPUBOOK_ATOM_MAX)
GPUBOOK_ATOMIC(atomicMax, GPUBOOK_ATOM_MAX, long long)
GPUBOOK_ATOMIC(atomicInc, GPUBOOK_ATOM_INC, unsigned)
GPUBOOK_ATOMIC(atomicDec, GPUBOOK_ATOM_DEC, unsigned)
GPUBOOK_ATOMIC_INTS(atomicAnd, GPUBOOK_ATOM_AND)
GPUBOOK_ATOMIC_INTS(atomicOr, GPUBOOK_ATOM_OR)
GPUBOOK_ATOMIC_INTS(atomicXor, GPUBOOK_ATOM_XOR)
#undef GPUBOOK_ATOMIC_INTS
#undef GPUBOOK_ATOMIC

#define GPUBOOK_ATOMIC_CAS(T)                                                                \
    static __forceinline__ T atomicCAS(T* p, T compare, T v) {                               \
        return ::gpubook::device::atomic<T>(GPUBOOK_ATOM_CAS, p, v, compare);                \
    }                                                                                        \
    static __forceinline__ T atomicCAS_block(T* p, T c, T v) { return atomicCAS(p, c, v); }  \
    static __forceinline__ T atomicCAS_system(T* p, T c, T v) { return atomicCAS(p, c, v); }
GPUBOOK_ATOMIC_CAS(int)
GPUBOOK_ATOMIC_CAS(unsigned)
GPUBOOK_ATOMIC_CAS(unsigned long long)
#undef GPUBOOK_ATOMIC_CAS

#endif
