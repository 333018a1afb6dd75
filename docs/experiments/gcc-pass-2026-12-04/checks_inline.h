// The checks pass.cpp's calls reach, compiled into the kernel: a generic version of what check
// mode does for every global access (worker/access/checks.cpp, races.cpp, unwritten.cpp,
// counts.cpp), with per-site state the pass makes possible: the buffer the site hit last, the
// site's lanes for the access counts. The common case inline, the rest out of line (`slow_*`,
// which here only count how often they ran: a right vector add never takes them).
// -DNO_RACES or -DNO_COUNTS leaves that part out (run.sh's VARIANTS: what each costs).
#ifndef CHECKS_INLINE_H
#define CHECKS_INLINE_H
#include <stdint.h>

#define GPUBOOK_NO_PASS __attribute__((no_instrument_function))
#define GPUBOOK_MAX_SITES 64

struct gpubook_buffer {
    uintptr_t lo, bytes;
};
// The race shadow's compact entry (races.cpp GlobalAccess): segment, thread + 1 | write | bytes.
struct gpubook_entry {
    uint32_t seg, meta;
};
struct gpubook_site {
    uintptr_t lo, span;        // the buffer this site hit last: [lo, lo + span + bytes)
    uintptr_t lane_addr[32];   // counts: the running warp's lanes at this site
    uint32_t lane_mask;
    uintptr_t last_addr;       // while lanes come in address order, counted as they come
    uint32_t run_words, run_sectors;
    bool in_order;
    uint64_t requests, bytes, unique_bytes, sectors;
};
struct gpubook_checks {
    uintptr_t arena, arena_bytes;
    uint64_t* unwritten;       // one bit a 4-byte word; 1 = never written
    gpubook_entry* compact;    // one a word
    uint32_t first_seg, seg;   // the launch's first segment, the running thread's
    uint32_t thread, lane;     // the running thread (linear in its block), its lane
    uint64_t accesses;         // the running thread's: stores << 32 | loads (one 8-byte add an access)
    uint32_t slice;            // accesses since it last yielded (check mode's lockstep)
    uint32_t min_loads, max_loads, min_stores, max_stores;
    uint64_t slow, yields;
    gpubook_buffer buffers[8]; // the launch's buffers
    unsigned nbuffers;
    gpubook_site sites[GPUBOOK_MAX_SITES];
};
extern gpubook_checks g_chk;
extern uintptr_t gpubook_arena_lo, gpubook_arena_bytes; // as g_chk.arena, arena_bytes

extern "C" bool __gpubook_maybe_device(const void* p) __attribute__((const, nothrow, leaf));

extern "C" {
GPUBOOK_NO_PASS void gpubook_slow_bounds(uintptr_t a, unsigned long n, unsigned site);
GPUBOOK_NO_PASS void gpubook_slow(const char* what, uintptr_t a);
GPUBOOK_NO_PASS void gpubook_slow_race(uintptr_t a, unsigned long n, unsigned flags);
GPUBOOK_NO_PASS void gpubook_yield();

// -DOUT_OF_LINE: the checks a direct call away (a function of the module, no PLT), as a pass
// placed after ThreadSanitizer's would call them; NO_SAVE also has the callee save what it uses.
#if defined(OUT_OF_LINE) && defined(NO_SAVE)
#define GPUBOOK_CHK_ATTRS __attribute__((noinline, used, no_caller_saved_registers, target("general-regs-only")))
#elif defined(OUT_OF_LINE)
#define GPUBOOK_CHK_ATTRS __attribute__((noinline, used))
#else
#define GPUBOOK_CHK_ATTRS inline __attribute__((always_inline, used))
#endif
static GPUBOOK_CHK_ATTRS GPUBOOK_NO_PASS void
__gpubook_chk(void* p, unsigned long n, unsigned flags, unsigned site) {
    gpubook_checks& c = g_chk;
    uintptr_t a = uintptr_t(p);
#ifdef DEVICE_TEST
    // An opaque test that pass.cpp's second pass folds to false for a local's address and
    // otherwise writes out as the arena's range test.
    if (!__gpubook_maybe_device(p)) return;
#else
    if (a - c.arena >= c.arena_bytes) return; // shared memory would be tested here; the rest is not device memory
#endif
    gpubook_site& s = c.sites[site];
    if (a - s.lo > s.span - n) gpubook_slow_bounds(a, n, site);
    if (a & (n - 1)) gpubook_slow("misaligned", a);
    bool write = flags & 1;
    uintptr_t off = a - c.arena, w = off / 4;
    uint64_t bit = uint64_t(1) << (w % 64);
    if (write) c.unwritten[w / 64] &= ~bit;
    else if (__builtin_expect(c.unwritten[w / 64] & bit, 0)) gpubook_slow("never written", a);
#ifndef NO_RACES
    // Race: the word's compact entry; a word another thread touched this launch goes out of line.
    gpubook_entry& e = c.compact[w];
    gpubook_entry cur{c.seg, (c.thread + 1) | (write ? 1u << 11 : 0) | ((1u << n) - 1) << 12};
    if (e.seg < c.first_seg) e = cur;
    else if (e.seg == cur.seg && (e.meta & 0x7ff) == (cur.meta & 0x7ff) && n == 4) {
        if (write || !(e.meta & 1u << 11)) e = cur;
    } else gpubook_slow_race(a, n, flags);
#endif
#ifndef NO_COUNTS
    // Counts: the lane's address at this site; the warp's request is counted when it ends.
    s.lane_addr[c.lane] = a;
    s.lane_mask |= 1u << c.lane;
    uintptr_t last = s.last_addr;
    s.in_order &= a >= last;
    s.run_words += a != last;
    s.run_sectors += a / 32 != last / 32;
    s.last_addr = a;
#endif
    c.accesses += write ? uint64_t(1) << 32 : 1;
    if (__builtin_expect(++c.slice >= 64, 0)) gpubook_yield();
}

// A thread's end: its loads and stores into the smallest and largest (check mode's spread).
static inline __attribute__((always_inline)) GPUBOOK_NO_PASS void gpubook_thread_end() {
    gpubook_checks& c = g_chk;
    uint32_t loads = uint32_t(c.accesses), stores = uint32_t(c.accesses >> 32);
    c.min_loads = loads < c.min_loads ? loads : c.min_loads;
    c.max_loads = loads > c.max_loads ? loads : c.max_loads;
    c.min_stores = stores < c.min_stores ? stores : c.min_stores;
    c.max_stores = stores > c.max_stores ? stores : c.max_stores;
    c.accesses = 0;
    c.slice = 0;
}
}
#endif
