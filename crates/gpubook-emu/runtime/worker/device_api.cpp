// The remaining entry points of device/abi.h: shared memory, checked atomics, traps.
#include "access/checks.h"
#include "access/races.h"
#include "worker.h"

#include <cstring>

using namespace gpubook::rt;

extern "C" void* gpubook_rt_shared_var(int id, const char* name, size_t bytes, size_t align, size_t elem) {
    Worker& w = *tls_worker;
    std::string error;
    void* p = w.blk->shared.variable(id, name, bytes, align, elem, &error);
    if (!p) {
        Diagnostic d;
        d.cls = "launch_config";
        d.message = error;
        d.pc = call_site(__builtin_return_address(0));
        loop_break(w);
        set_location(d, *w.blk, w.current);
        fail_block(w, std::move(d));
    }
    return p;
}

extern "C" void* gpubook_rt_dynamic_shared(const char* name, size_t elem) {
    return tls_worker->blk->shared.dynamic_region(name, elem);
}

namespace {

template <class T>
T apply(int op, T old, T v, T cmp) {
    switch (op) {
    case GPUBOOK_ATOM_ADD: return T(old + v);
    case GPUBOOK_ATOM_SUB: return T(old - v);
    case GPUBOOK_ATOM_EXCH: return v;
    case GPUBOOK_ATOM_MIN: return v < old ? v : old;
    case GPUBOOK_ATOM_MAX: return v > old ? v : old;
    case GPUBOOK_ATOM_INC: return old >= v ? T(0) : T(old + 1);
    case GPUBOOK_ATOM_DEC: return (old == T(0) || old > v) ? v : T(old - 1);
    case GPUBOOK_ATOM_CAS: return old == cmp ? v : old;
    default: break;
    }
    if constexpr (T(0.5) == T(0)) { // integers only
        switch (op) {
        case GPUBOOK_ATOM_AND: return T(old & v);
        case GPUBOOK_ATOM_OR: return T(old | v);
        default: return T(old ^ v);
        }
    }
    return old;
}

// Atomically replaces *p by apply(op, *p, ...) and returns the old value, as bits.
template <class T, class Bits>
uint64_t atomic_rmw(int op, void* addr, uint64_t value, uint64_t compare) {
    T v, cmp;
    std::memcpy(&v, &value, sizeof(T));
    std::memcpy(&cmp, &compare, sizeof(T));
    auto* p = static_cast<Bits*>(addr);
    Bits old_bits = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        T old;
        std::memcpy(&old, &old_bits, sizeof(T));
        T next = apply(op, old, v, cmp);
        Bits next_bits;
        std::memcpy(&next_bits, &next, sizeof(T));
        if (__atomic_compare_exchange_n(p, &old_bits, next_bits, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            uint64_t out = 0;
            std::memcpy(&out, &old, sizeof(T));
            return out;
        }
    }
}

} // namespace

extern "C" uint64_t gpubook_rt_atomic(int op, int type, void* addr, uint64_t value, uint64_t compare) {
    size_t size = (type == GPUBOOK_T_I64 || type == GPUBOOK_T_U64 || type == GPUBOOK_T_F64) ? 8 : 4;
    uintptr_t pc = call_site(__builtin_return_address(0));
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (Worker* w = tls_worker) loop_break(*w);
    // Every atomic but atomicExch reads the old value: atomicAdd on a counter nobody zeroed.
    if (op != GPUBOOK_ATOM_EXCH) check_atomic_read(a, size, pc);
    check_access(a, size, kAccessWrite | kAccessSync | kAccessRmw | kAccessAligned, pc);
    uint64_t old;
    switch (type) {
    case GPUBOOK_T_I32: old = atomic_rmw<int32_t, uint32_t>(op, addr, value, compare); break;
    case GPUBOOK_T_U32: old = atomic_rmw<uint32_t, uint32_t>(op, addr, value, compare); break;
    case GPUBOOK_T_I64: old = atomic_rmw<int64_t, uint64_t>(op, addr, value, compare); break;
    case GPUBOOK_T_U64: old = atomic_rmw<uint64_t, uint64_t>(op, addr, value, compare); break;
    case GPUBOOK_T_F32: old = atomic_rmw<float, uint32_t>(op, addr, value, compare); break;
    default: old = atomic_rmw<double, uint64_t>(op, addr, value, compare); break;
    }
    // A loop of atomics that keep finding the same value (a lock, a flag read with
    // atomicAdd(p, 0)) waits for someone else.
    if (Worker* w = tls_worker; w && w->blk) spin_point(*w, pc, a, old);
    return old;
}

namespace {
[[noreturn]] void trap(std::string message, uintptr_t pc) {
    Worker* w = tls_worker;
    Diagnostic d;
    d.cls = "trap";
    d.message = std::move(message);
    d.pc = pc;
    loop_break(*w);
    set_location(d, *w->blk, w->current);
    fail_block(*w, std::move(d));
}
} // namespace

extern "C" void gpubook_rt_trap(void) {
    trap("the kernel called __trap(), which ends the launch with an error.",
         call_site(__builtin_return_address(0)));
}

extern "C" void gpubook_rt_assert_fail(const char* expr, const char* file, int line, const char* func) {
    trap(format("assertion failed in %s (%s:%d): assert(%s)", func, file, line, expr),
         call_site(__builtin_return_address(0)));
}
