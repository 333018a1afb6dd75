// Check mode's inline checks (device/check_inline.h): the thread-local state they read, and
// the call that takes whatever they decline. Part of worker/access.cpp's translation unit, after
// checks.cpp, counts.cpp, races.cpp and unwritten.cpp, whose internals it reads.
#include "inline_checks.h"

#include "../arena.h"
#include "../worker.h"
#include "checks.h"
#include "counts.h"

#include <algorithm>
#include <cstddef>

extern "C" {
__thread gpubook_check_state gpubook_check_tls __attribute__((tls_model("initial-exec"))) = {};
// For a call the pass did not fold (check_inline.h): every pointer may be device memory.
bool __gpubook_maybe_device(const void*) { return true; }
}

namespace gpubook::rt {

// The inline path reads and writes the worker's own structs through check_state.h's mirrors.
#define GPUBOOK_SAME_FIELD(A, B, FIELD_A, FIELD_B) \
    static_assert(offsetof(A, FIELD_A) == offsetof(B, FIELD_B), #A "::" #FIELD_A " moved")
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, counts.global_loads, global_loads);
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, counts.global_stores, global_stores);
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, counts.barriers, barriers);
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, slice_accesses, slice);
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, started, started);
static_assert(offsetof(ThreadChecks, started) + sizeof(uint32_t) == sizeof(gpubook_thread_hot),
              "the block loop zeroes exactly the hot part");
GPUBOOK_SAME_FIELD(GlobalAccess, gpubook_race_entry, seg, seg);
GPUBOOK_SAME_FIELD(GlobalAccess, gpubook_race_entry, meta, meta);
static_assert(kGThreadMask == GPUBOOK_RACE_THREAD_MASK && kGWrite == GPUBOOK_RACE_WRITE &&
                  kGBytesShift == GPUBOOK_RACE_BYTES_SHIFT && kGBytesMask == GPUBOOK_RACE_BYTES_MASK,
              "compact entries read the same both sides");
GPUBOOK_SAME_FIELD(Request, gpubook_request, lanes, lanes);
GPUBOOK_SAME_FIELD(Request, gpubook_request, in_line, in_line);
GPUBOOK_SAME_FIELD(Request, gpubook_request, line, line);
GPUBOOK_SAME_FIELD(Request, gpubook_request, line_buffer, line_buffer);
GPUBOOK_SAME_FIELD(Request, gpubook_request, addr, addr);
GPUBOOK_SAME_FIELD(Request, gpubook_request, buffer, buffer);
static_assert(sizeof(Request) == sizeof(gpubook_request), "a ring of Requests");
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, occurrences, occurrences);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, floor, floor);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, retired, retired);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, newest, newest);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, ring_data, ring);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, ring_mask, ring_mask);
#undef GPUBOOK_SAME_FIELD
static_assert(kAccessWrite == 1 && kAccessAligned == 4, "the pass's flags, as check_inline.h reads them");

namespace {
__thread uint32_t tls_launches = 0; // this OS thread's launch numbers
__thread bool tls_checked = false;  // the running launch checks inline
__thread ThreadChecks tls_loop_checks;
// The extremes of the counts of threads that ended inside block loops (gpubook_rt_loop_fold).
__thread ThreadCounts tls_loop_most, tls_loop_least;
__thread bool tls_loop_folded = false;

void forget_loop_folds() {
    tls_loop_folded = false;
    std::fill(std::begin(gpubook_check_tls.loop_last), std::end(gpubook_check_tls.loop_last), ~uint64_t(0));
}
} // namespace

ThreadChecks& loop_checks() { return tls_loop_checks; }

void inline_fold_loops(ThreadCounts& most, ThreadCounts& least) {
    if (!tls_loop_folded) return;
    fold_max(most, tls_loop_most);
    fold_min(least, tls_loop_least);
    forget_loop_folds();
}

void inline_begin_launch(bool checked) {
    gpubook_check_state& s = gpubook_check_tls;
    if (++tls_launches == 0) { // wrapped: no slot may look current
        for (gpubook_site_slot& slot : s.slots) slot.launch = 0;
        tls_launches = 1;
    }
    tls_checked = checked;
    s.launch = tls_launches;
    s.arena_lo = g_arena.base();
    s.arena_bytes = checked ? g_arena.bytes() : 0;
    s.shared_lo = s.shared_bytes = 0;
    s.hot = nullptr;
    s.loop_hot = reinterpret_cast<gpubook_thread_hot*>(&tls_loop_checks);
    forget_loop_folds();
    s.first_seg = g_first_segment;
    s.compact = checked && g_global ? reinterpret_cast<gpubook_race_entry*>(g_compact) : nullptr;
    s.unwritten = g_bits;
    s.unwritten_words = checked && g_any ? g_words : 0;
    inline_segments_moved();
    inline_sites_moved();
}

void inline_set_thread(const Thread* t) {
    if (!t) return;
    gpubook_check_state& s = gpubook_check_tls;
    s.thread = t->linear;
    s.hot = reinterpret_cast<gpubook_thread_hot*>(t->chk);
    if (!tls_checked) return;
    s.shared_lo = t->block->shared.base();
    s.shared_bytes = t->block->shared.capacity();
}

void inline_begin_loop(Block& b) {
    gpubook_check_state& s = gpubook_check_tls;
    s.hot = s.loop_hot;
    if (!tls_checked) return;
    s.shared_lo = b.shared.base();
    s.shared_bytes = b.shared.capacity();
}

namespace {

// After the worker checked a global access at `pc` in `buf`: what the site's next accesses need.
void fill_slot(Worker& w, gpubook_site_slot& slot, unsigned site, const Buffer& buf, uintptr_t pc) {
    gpubook_check_state& s = gpubook_check_tls;
    Block& b = *w.blk;
    const unsigned warp = w.current->linear / kWarpSize;
    Site& cs = site_of(b.counts, warp, (pc << 1));
    slot.launch = s.launch;
    slot.site = site;
    slot.lo = buf.addr;
    slot.end = buf.addr + buf.bytes;
    slot.buffer = &buf;
    slot.race_meta = g_global ? site_of(uint32_t(pc - w.launch->module_base)) << kGSiteShift : 0;
    slot.count_site = reinterpret_cast<gpubook_count_site*>(&cs);
    slot.count_warp = warp;
    slot.count_gen = s.count_gen; // after site_of, which may have moved the Sites
    if (g_global) {
        s.seg = current_segment(b, b.warps[warp]);
        s.seg_warp = warp;
    }
}

} // namespace

} // namespace gpubook::rt

using namespace gpubook::rt;

extern "C" void gpubook_rt_loop_fold(void) {
    const ThreadCounts& c = tls_loop_checks.counts;
    if (!tls_loop_folded) {
        tls_loop_most = tls_loop_least = c;
        tls_loop_folded = true;
    } else {
        fold_max(tls_loop_most, c);
        fold_min(tls_loop_least, c);
    }
    uint64_t* last = gpubook_check_tls.loop_last;
    last[0] = c.global_loads, last[1] = c.global_stores, last[2] = c.shared_loads;
    last[3] = c.shared_stores, last[4] = c.atomics, last[5] = c.barriers;
}

extern "C" void gpubook_rt_check_shared(const void* p, unsigned long n, unsigned flags) {
    Worker* w = tls_worker;
    if (__builtin_expect(g_access_checks_off, 0) || !w || !w->blk) return;
    loop_sync(*w);
    check_shared(*w, reinterpret_cast<uintptr_t>(p), n, flags, call_site(__builtin_return_address(0)));
}

extern "C" void gpubook_rt_check_slow(const void* p, unsigned long n, unsigned flags, gpubook_site_slot* slot,
                                      unsigned site) {
    uintptr_t pc = call_site(__builtin_return_address(0));
    Worker* w = tls_worker;
    if (__builtin_expect(g_access_checks_off, 0) || !w || !w->blk) return;
    loop_sync(*w);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const Buffer& buf = check_global(*w, a, n, flags, pc); // the inline path saw it in the arena
    fill_slot(*w, *slot, site, buf, pc);
}
