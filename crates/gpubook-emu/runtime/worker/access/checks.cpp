// Check mode's memory checks: the __tsan_* hooks that g++ -fsanitize=thread emits before every
// load and store of a kernel (and for every atomic builtin).
//
// We define the hooks ourselves (no TSan runtime; compile.rs links kernels without it). ThreadSanitizer's
// instrumentation suits us better than AddressSanitizer's: it reports every store (ASan skips
// a store to an address the same basic block already checked), says which accesses are volatile
// (a thread waiting for a flag) and which assume natural alignment, and routes atomics through
// us. An access to device memory must lie in a live buffer, one to shared memory in a __shared__
// variable; anything else (the thread's own stack, host globals) is allowed. Then the race
// detector and the access counts see it.
#include "checks.h"

#include "../arena.h"
#include "races.h"
#include "unwritten.h"
#include "../worker.h"

namespace gpubook::rt {

namespace {

// A thread that made this many device-memory accesses yields to the other threads of its
// block, so lanes of a warp stay close together and counts.cpp can pair up their accesses.
constexpr unsigned kLockstepAccesses = 64;

const char* kind(bool write) { return write ? "write" : "read"; }

[[noreturn]] void fail_here(Worker& w, Diagnostic d, uintptr_t pc) {
    d.pc = pc;
    set_location(d, *w.blk, w.current);
    fail_block(w, std::move(d));
}

// An address so far outside buffer b that calling it one of b's elements would mislead.
bool far_from(const Buffer& b, uintptr_t a) {
    uintptr_t gap = distance_outside(b, a);
    return gap >= (uintptr_t(1) << 20) && gap / 4 > b.bytes;
}

std::string bytes_text(uintptr_t n) {
    if (n >= (uintptr_t(1) << 30)) return format("%.1f GiB", double(n) / double(uintptr_t(1) << 30));
    if (n >= (uintptr_t(1) << 20)) return format("%.1f MiB", double(n) / double(uintptr_t(1) << 20));
    return format("%lu bytes", (unsigned long)n);
}

[[noreturn]] __attribute__((noinline, cold)) void report_global(Worker& w, uintptr_t a, size_t n, bool write, uintptr_t pc) {
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
    } else if (near && far_from(*near, a)) {
        bool past = a >= near->addr;
        uintptr_t gap = distance_outside(*near, a);
        d.message = format("out-of-bounds %s at device address %#lx, which belongs to no buffer: %s %s buffer '%s', "
                           "the nearest (as its element: %s). An offset this large is most often an index that "
                           "wrapped around: an unsigned subtraction below zero (0u - 1 is 4294967295), or an "
                           "int or short that overflowed.",
                           kind(write), (unsigned long)a, bytes_text(gap).c_str(), past ? "past the end of" : "before",
                           near->label.c_str(), describe_element(*near, a, n).c_str());
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
    fail_here(w, std::move(d), pc);
}

[[noreturn]] __attribute__((noinline, cold)) void report_shared(Worker& w, uintptr_t a, size_t n, bool write, uintptr_t pc) {
    Diagnostic d;
    d.cls = "out_of_bounds";
    const SharedVar* v = w.blk->shared.nearest(a);
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
    fail_here(w, std::move(d), pc);
}

// The largest power of two that divides a (up to 256): how the address is aligned.
size_t alignment_of(uintptr_t a) {
    size_t al = 1;
    while (al < 256 && a % (al * 2) == 0) al *= 2;
    return al;
}

[[noreturn]] __attribute__((noinline, cold)) void report_misaligned(Worker& w, uintptr_t a, size_t n, bool write, bool shared, uintptr_t pc) {
    Diagnostic d;
    d.cls = "misaligned";
    std::string where;
    if (shared) {
        const SharedVar* v = w.blk->shared.find(a, 1);
        where = v ? format("byte %zu of %s '%s'", size_t(a - v->addr), v->dynamic ? "dynamic shared memory" : "__shared__ variable", v->name)
                  : std::string("shared memory");
    } else {
        const Buffer* b = g_arena.find(a, 1);
        where = b ? format("byte %zu of buffer '%s'", size_t(a - b->addr), b->label.c_str()) : std::string("device memory");
    }
    d.message = format("misaligned %s: a %zu-byte access at address %#lx (%s), which is only %zu-byte aligned. "
                       "A GPU needs every access aligned to its size (a float4 or int4 to 16 bytes, a double to "
                       "8) and stops the kernel with \"misaligned address\". A pointer offset by a number of "
                       "elements that is not a multiple of the vector width is the usual cause.",
                       kind(write), n, (unsigned long)a, where.c_str(), alignment_of(a));
    fail_here(w, std::move(d), pc);
}

// An access the compiler assumed aligned (the sized hooks and atomics: 1, 2, 4, 8 or 16 bytes, a
// power of two, so a mask and not a division) at an address that is not.
inline bool misaligned(uintptr_t a, size_t n, unsigned f) { return (f & kAccessAligned) && (a & (n - 1)); }

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
    fail_here(w, std::move(d), pc);
}

void report_unwritten_read(Worker& w, Block& b) {
    const UnwrittenRead& r = *b.shared.unwritten_read();
    const SharedVar* v = b.shared.find(r.addr, 1);
    std::string what = v ? format("element %zu of %s '%s'", size_t(r.addr - v->addr) / v->elem_size,
                                  v->dynamic ? "dynamic shared memory" : "__shared__ variable", v->name)
                         : std::string("shared memory");
    const char* fix = r.atomic ? "A counter, flag or histogram in shared memory needs a first value (zero it), "
                                 "and a __syncthreads(), before the first atomic on it."
                               : "Threads that fill a tile only where their index is in range (if (i < n)) leave "
                                 "the other slots unwritten: store a neutral value there (0 for a sum), or guard "
                                 "the read the same way.";
    Diagnostic d;
    d.cls = "uninitialized_read";
    d.message = format("%s never-written shared memory: %s (a %u-byte %s), which no thread of this block had "
                       "written, nor wrote before the block's next __syncthreads() or its end. Shared memory "
                       "starts every block with whatever was there before (on a GPU another block's data; here "
                       "the 0xFF poison: NaN as a float, -1 as an int). %s",
                       r.atomic ? "atomic on" : "read of", what.c_str(), r.bytes,
                       r.atomic ? "atomic, which reads it" : "read", fix);
    d.pc = r.pc;
    set_location(d, b, &b.threads[r.thread]);
    fail_block(w, std::move(d));
}

void check_atomic_read(uintptr_t a, size_t n, uintptr_t pc) {
    Worker* w = tls_worker;
    if (!w || !w->blk || !n) return;
    loop_break(*w);
    if (unwritten_any(a, n)) report_unwritten(*w, a, n, pc);
    SharedMemory& s = w->blk->shared;
    if (s.contains(a) && s.holds(a, n) && s.never_written(a, n))
        s.note_unwritten_read(UnwrittenRead{a, pc, uint32_t(n), w->current->linear, true});
}

namespace {

// The rest of a checked access, once its space is known: the race check and the counts.
__attribute__((always_inline)) inline void after_bounds(Worker& w, uintptr_t a, size_t n, unsigned f, uintptr_t pc,
                                                        bool shared, const Buffer* buf) {
    Thread& t = *w.current;
    Launch& l = *w.launch;
    if (shared) race_check_shared(w, a, n, f, pc);
    else race_check_global(w, a, n, f, pc);
    if (f & kAccessRmw) counts_atomic(l, t, shared, buf);
    else counts_access(l, *w.blk, t, a, n, f & kAccessWrite, shared, buf, pc);
    if (++t.chk->slice_accesses >= kLockstepAccesses) yield_current(w, false);
}

// One function per memory space, each `flatten`ed: the race check and the counts (other files
// of worker/access.cpp's one translation unit) are inlined with `shared` a constant, so each
// keeps only its own space's code and the compiler has fewer values to keep in registers.
// Returns the buffer (inline_checks.cpp keeps it for the site's next access).
__attribute__((flatten, noinline)) const Buffer& check_global(Worker& w, uintptr_t a, size_t n, unsigned f, uintptr_t pc) {
    bool write = f & kAccessWrite;
    w.last_access_pc = pc;
    // Buffers do not change during a launch: most accesses hit a buffer one of the last few
    // accesses hit (a kernel takes turns between its inputs and outputs).
    const Buffer* buf = w.recent_buffers.find(a, n);
    if (!buf) {
        buf = g_arena.find(a, n);
        if (!buf) report_global(w, a, n, write, pc);
        w.recent_buffers.add(buf->addr, buf->addr + buf->bytes, buf);
        races_touch(*buf); // the launch's first access to it, or one after it left the cache
    }
    if (misaligned(a, n, f)) report_misaligned(w, a, n, write, false, pc);
    // An atomic that reads (all but exchange and store) was checked by its caller.
    size_t off = a - g_arena.base();
    if (write) unwritten_store_at(off, n);
    else if (unwritten_load_at(off, n)) report_unwritten(w, a, n, pc);
    after_bounds(w, a, n, f, pc, false, buf);
    return *buf;
}

__attribute__((flatten, noinline)) void check_shared(Worker& w, uintptr_t a, size_t n, unsigned f, uintptr_t pc) {
    bool write = f & kAccessWrite;
    w.last_access_pc = pc;
    SharedMemory& shared = w.blk->shared;
    if (!shared.holds(a, n)) report_shared(w, a, n, write, pc);
    if (misaligned(a, n, f)) report_misaligned(w, a, n, write, true, pc);
    // An atomic that reads (all but exchange and store) was checked by its caller.
    if (write) shared.note_store(a, n, w.current->linear, f & kAccessRmw);
    else if (__builtin_expect(shared.never_written(a, n), 0))
        shared.note_unwritten_read(UnwrittenRead{a, pc, uint32_t(n), w.current->linear, false});
    after_bounds(w, a, n, f, pc, true, nullptr);
}

} // namespace

bool g_access_checks_off = false;

// Every checked load and store comes here. Anything not in device or shared memory (the
// thread's stack, a host global) is not checked.
void check_access(uintptr_t a, size_t n, unsigned f, uintptr_t pc) {
    if (__builtin_expect(g_access_checks_off, 0)) return;
    Worker* w = tls_worker;
    if (!w || !w->blk || !n) return;
    loop_break(*w); // a volatile or atomic access may wait; the inline checks' call syncs instead
    if (g_arena.contains(a)) check_global(*w, a, n, f, pc);
    else if (w->blk->shared.contains(a)) check_shared(*w, a, n, f, pc);
}

} // namespace gpubook::rt

using namespace gpubook::rt;

namespace {

inline uintptr_t caller(void* ra) { return call_site(ra); }

inline void access(void* p, size_t n, unsigned flags, void* ra) {
    check_access(reinterpret_cast<uintptr_t>(p), n, flags, caller(ra));
}

// A volatile read: also a place where a thread may be waiting for another one.
template <class T> inline void volatile_read(void* p, void* ra) {
    uintptr_t pc = caller(ra);
    check_access(reinterpret_cast<uintptr_t>(p), sizeof(T), kAccessSync | kAccessVolatile | kAccessAligned, pc);
    Worker* w = tls_worker;
    if (!w || !w->blk) return;
    auto value = [p] {
        uint64_t bits = 0;
        __builtin_memcpy(&bits, p, sizeof(T) < 8 ? sizeof(T) : 8);
        return bits;
    };
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    bool device = g_arena.contains(a) || w->blk->shared.contains(a);
    // The flag the thread waits for, as its load will find it (races.cpp's reports name it).
    auto note_flag = [&] {
        if (!device) return;
        ThreadChecks& c = *w->current->chk;
        c.flag_pc = pc;
        c.flag_addr = a;
        c.flag_set = races_set_by_another(*w, a);
    };
    if (!spin_point(*w, pc, a, value())) return note_flag();
    // The hook runs before the load, so after a wait the load reads what others wrote meanwhile:
    // note the new value (a change is progress), and acquire what was released with it.
    spin_point(*w, pc, a, value(), false);
    if (device) races_acquire(*w, a);
    note_flag();
}

} // namespace

#define GPUBOOK_SIZED_HOOKS(N)                                                                            \
    extern "C" void __tsan_read##N(void* p) { access(p, N, kAccessAligned, __builtin_return_address(0)); } \
    extern "C" void __tsan_write##N(void* p) {                                                           \
        access(p, N, kAccessWrite | kAccessAligned, __builtin_return_address(0));                        \
    }                                                                                                    \
    extern "C" void __tsan_unaligned_read##N(void* p) { access(p, N, 0, __builtin_return_address(0)); }  \
    extern "C" void __tsan_unaligned_write##N(void* p) {                                                 \
        access(p, N, kAccessWrite, __builtin_return_address(0));                                         \
    }                                                                                                    \
    extern "C" void __tsan_volatile_write##N(void* p) {                                                  \
        access(p, N, kAccessWrite | kAccessSync | kAccessVolatile | kAccessAligned,                      \
               __builtin_return_address(0));                                                             \
    }                                                                                                    \
    extern "C" void __tsan_unaligned_volatile_write##N(void* p) {                                        \
        access(p, N, kAccessWrite | kAccessSync | kAccessVolatile, __builtin_return_address(0));         \
    }
GPUBOOK_SIZED_HOOKS(1)
GPUBOOK_SIZED_HOOKS(2)
GPUBOOK_SIZED_HOOKS(4)
GPUBOOK_SIZED_HOOKS(8)
GPUBOOK_SIZED_HOOKS(16)
#undef GPUBOOK_SIZED_HOOKS

extern "C" void __tsan_volatile_read1(void* p) { volatile_read<uint8_t>(p, __builtin_return_address(0)); }
extern "C" void __tsan_volatile_read2(void* p) { volatile_read<uint16_t>(p, __builtin_return_address(0)); }
extern "C" void __tsan_volatile_read4(void* p) { volatile_read<uint32_t>(p, __builtin_return_address(0)); }
extern "C" void __tsan_volatile_read8(void* p) { volatile_read<uint64_t>(p, __builtin_return_address(0)); }
extern "C" void __tsan_volatile_read16(void* p) { volatile_read<unsigned __int128>(p, __builtin_return_address(0)); }
extern "C" void __tsan_unaligned_volatile_read2(void* p) { access(p, 2, kAccessSync | kAccessVolatile, __builtin_return_address(0)); }
extern "C" void __tsan_unaligned_volatile_read4(void* p) { access(p, 4, kAccessSync | kAccessVolatile, __builtin_return_address(0)); }
extern "C" void __tsan_unaligned_volatile_read8(void* p) { access(p, 8, kAccessSync | kAccessVolatile, __builtin_return_address(0)); }
extern "C" void __tsan_unaligned_volatile_read16(void* p) { access(p, 16, kAccessSync | kAccessVolatile, __builtin_return_address(0)); }

// Aggregates (a float3, a struct) and accesses of unusual size come as ranges.
extern "C" void __tsan_read_range(void* p, unsigned long n) { access(p, n, 0, __builtin_return_address(0)); }
extern "C" void __tsan_write_range(void* p, unsigned long n) { access(p, n, kAccessWrite, __builtin_return_address(0)); }

// Emitted for calls; nothing to track (compile.rs turns them off where the compiler can).
extern "C" void __tsan_func_entry(void*) {}
extern "C" void __tsan_func_exit(void) {}
extern "C" void __tsan_init(void) {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_vptr_read(void**) {}
