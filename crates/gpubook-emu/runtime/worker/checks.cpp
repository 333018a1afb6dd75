// Check mode's memory checks: the __asan_* hooks that g++ -fsanitize=kernel-address with
// call instrumentation emits before every load and store of a kernel.
//
// We define the hooks ourselves (no ASan runtime): an access to device memory must lie in
// a live buffer, an access to the block's shared memory in a __shared__ variable; anything
// else (the thread's own stack, host globals) is allowed. Then the race detector sees it.
#include "arena.h"
#include "checks.h"
#include "races.h"
#include "unwritten.h"
#include "worker.h"

namespace gpubook::rt {

namespace {

const char* kind(bool write) { return write ? "write" : "read"; }

[[noreturn]] void report_global(Worker& w, uintptr_t a, size_t n, bool write, uintptr_t pc) {
    Diagnostic d;
    d.cls = "out_of_bounds";
    const Buffer* in = g_arena.find(a, 1);
    const Buffer* near = g_arena.nearest(a);
    const Buffer* freed = g_arena.freed_at(a);
    if (in) {
        d.message = format("out-of-bounds %s: the %zu-byte access at %s runs past the end of the buffer.",
                           kind(write), n, describe_element(*in, a, n).c_str());
    } else if (freed) {
        d.message = format("%s of freed device memory: %s was freed before this launch (use after free).",
                           write ? "write" : "read", describe_element(*freed, a, n).c_str());
    } else if (near && a >= near->addr + near->bytes) {
        d.message = format("out-of-bounds %s past the end of a buffer: %s. Check the index against the "
                           "length (if (i < n)), and that the grid does not cover more elements than exist.",
                           kind(write), describe_element(*near, a, n).c_str());
    } else if (near) {
        d.message = format("out-of-bounds %s before the start of a buffer: %s.", kind(write),
                           describe_element(*near, a, n).c_str());
    } else {
        d.message = format("out-of-bounds %s at device address %#lx, which belongs to no buffer.", kind(write),
                           (unsigned long)a);
    }
    d.pc = pc;
    set_location(d, w, w.current);
    fail_block(w, std::move(d));
}

[[noreturn]] void report_shared(Worker& w, uintptr_t a, size_t n, bool write, uintptr_t pc) {
    Diagnostic d;
    d.cls = "out_of_bounds";
    const SharedVar* v = w.shared.nearest(a);
    if (!v) {
        d.message = format("out-of-bounds %s of shared memory: the block has no __shared__ variables.", kind(write));
    } else {
        long long off = (long long)(a - v->addr);
        long long idx = off >= 0 ? off / (long long)v->elem_size : -((-off + (long long)v->elem_size - 1) / (long long)v->elem_size);
        size_t count = v->bytes / v->elem_size;
        if (v->dynamic && v->bytes == 0) {
            d.message = format("out-of-bounds %s of dynamic shared memory '%s' (element %lld): the launch gave "
                               "no dynamic shared memory. Set shared_mem_bytes in the launch config.",
                               kind(write), v->name, idx);
        } else {
            d.message = format("out-of-bounds %s of %s '%s': element %lld (a %zu-byte access), but it has %zu "
                               "elements of %zu bytes (%zu bytes%s).",
                               kind(write), v->dynamic ? "dynamic shared memory" : "__shared__ variable", v->name,
                               idx, n, count, v->elem_size, v->bytes,
                               v->dynamic ? ", from shared_mem_bytes" : "");
        }
    }
    d.pc = pc;
    set_location(d, w, w.current);
    fail_block(w, std::move(d));
}

} // namespace

void report_unwritten(Worker& w, uintptr_t a, size_t n, uintptr_t pc) {
    Diagnostic d;
    d.cls = "uninitialized_read";
    const Buffer* b = g_arena.find(a, 1);
    std::string what = b ? describe_element(*b, a, n) : format("device address %#lx", (unsigned long)a);
    d.message = format("read of never-written device memory: %s. Nothing has written it since it was allocated "
                       "(it holds the 0xFF poison: NaN as a float, -1 as an int). Copy data to it first "
                       "(clone_htod / memcpy_htod), zero it (alloc_zeros / memset_zeros), or have a kernel "
                       "write it before this one reads it.",
                       what.c_str());
    d.pc = pc;
    set_location(d, w, w.current);
    fail_block(w, std::move(d));
}

void check_access(uintptr_t a, size_t n, bool write, bool atomic, uintptr_t pc) {
    Worker* w = tls_worker;
    if (!w || !w->in_block || !n) return;
    if (g_arena.contains(a)) {
        w->last_access_pc = pc;
        if (!g_arena.find(a, n)) report_global(*w, a, n, write, pc);
        if (write) unwritten_clear(a, n);
        else if (unwritten_any(a, n)) report_unwritten(*w, a, n, pc);
        if (w->launch->mode == Mode::Check) race_check(*w, a, n, write, atomic, pc, false);
    } else if (w->shared.contains(a)) {
        w->last_access_pc = pc;
        if (!w->shared.find(a, n)) report_shared(*w, a, n, write, pc);
        if (w->launch->mode == Mode::Check) race_check(*w, a, n, write, atomic, pc, true);
    }
}

} // namespace gpubook::rt

using gpubook::rt::call_site;
using gpubook::rt::check_access;

#define GPUBOOK_HOOKS(SIZE)                                                                       \
    extern "C" void __asan_load##SIZE##_noabort(void* p) {                                        \
        check_access(reinterpret_cast<uintptr_t>(p), SIZE, false, false, call_site(__builtin_return_address(0))); \
    }                                                                                             \
    extern "C" void __asan_store##SIZE##_noabort(void* p) {                                       \
        check_access(reinterpret_cast<uintptr_t>(p), SIZE, true, false, call_site(__builtin_return_address(0)));  \
    }                                                                                             \
    extern "C" void __asan_load##SIZE(void* p) {                                                  \
        check_access(reinterpret_cast<uintptr_t>(p), SIZE, false, false, call_site(__builtin_return_address(0))); \
    }                                                                                             \
    extern "C" void __asan_store##SIZE(void* p) {                                                 \
        check_access(reinterpret_cast<uintptr_t>(p), SIZE, true, false, call_site(__builtin_return_address(0)));  \
    }
GPUBOOK_HOOKS(1)
GPUBOOK_HOOKS(2)
GPUBOOK_HOOKS(4)
GPUBOOK_HOOKS(8)
GPUBOOK_HOOKS(16)
#undef GPUBOOK_HOOKS

extern "C" void __asan_loadN_noabort(void* p, size_t n) {
    check_access(reinterpret_cast<uintptr_t>(p), n, false, false, call_site(__builtin_return_address(0)));
}
extern "C" void __asan_storeN_noabort(void* p, size_t n) {
    check_access(reinterpret_cast<uintptr_t>(p), n, true, false, call_site(__builtin_return_address(0)));
}
extern "C" void __asan_loadN(void* p, size_t n) {
    check_access(reinterpret_cast<uintptr_t>(p), n, false, false, call_site(__builtin_return_address(0)));
}
extern "C" void __asan_storeN(void* p, size_t n) {
    check_access(reinterpret_cast<uintptr_t>(p), n, true, false, call_site(__builtin_return_address(0)));
}
// Emitted before calls that do not return; nothing to clean up without an ASan runtime.
extern "C" void __asan_handle_no_return(void) {}
extern "C" void __asan_before_dynamic_init(const char*) {}
extern "C" void __asan_after_dynamic_init(void) {}
