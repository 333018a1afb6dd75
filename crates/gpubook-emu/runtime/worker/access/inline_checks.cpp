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
GPUBOOK_SAME_FIELD(GlobalWord, gpubook_race_word, write, write);
GPUBOOK_SAME_FIELD(GlobalWord, gpubook_race_word, read1, read1);
GPUBOOK_SAME_FIELD(GlobalWord, gpubook_race_word, read2, read2);
static_assert(sizeof(GlobalWord) == sizeof(gpubook_race_word), "full shadow words are indexed both sides");
GPUBOOK_SAME_FIELD(Segment, gpubook_race_segment, block, block);
static_assert(sizeof(Segment) == sizeof(gpubook_race_segment), "segments are indexed both sides");
static_assert(kGThreadMask == GPUBOOK_RACE_THREAD_MASK && kGWrite == GPUBOOK_RACE_WRITE &&
                  kGBytesShift == GPUBOOK_RACE_BYTES_SHIFT && kGBytesMask == GPUBOOK_RACE_BYTES_MASK,
              "compact entries read the same both sides");
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, counts.shared_loads, shared_loads);
GPUBOOK_SAME_FIELD(ThreadChecks, gpubook_thread_hot, counts.shared_stores, shared_stores);
GPUBOOK_SAME_FIELD(SharedWord, gpubook_shared_word, interval, interval);
GPUBOOK_SAME_FIELD(SharedWord, gpubook_shared_word, write, write);
GPUBOOK_SAME_FIELD(SharedWord, gpubook_shared_word, read1, read1);
GPUBOOK_SAME_FIELD(SharedWord, gpubook_shared_word, read2, read2);
GPUBOOK_SAME_FIELD(SharedAccess, gpubook_shared_access, pc_bytes, pc_bytes);
GPUBOOK_SAME_FIELD(SharedAccess, gpubook_shared_access, who, who);
GPUBOOK_SAME_FIELD(SharedAccess, gpubook_shared_access, warp_epoch, warp_epoch);
static_assert(sizeof(SharedWord) == sizeof(gpubook_shared_word) && sizeof(SharedAccess) == sizeof(gpubook_shared_access),
              "shared shadow words read the same both sides");
static_assert(kThreadMask == GPUBOOK_SHARED_THREAD_MASK && kWrite == GPUBOOK_SHARED_WRITE,
              "shared shadow entries read the same both sides");
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, key, key);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, warp, warp);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, occurrences, occurrences);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, floor, floor);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, retired, retired);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, newest, newest);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, ring_data, ring_data);
GPUBOOK_SAME_FIELD(Site, gpubook_count_site, ring_mask, ring_mask);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, occurrence, occurrence);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, lanes, lanes);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, size, size);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, write, write);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, shared, shared);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, in_line, in_line);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, line, line);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, line_buffer, line_buffer);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, addr, addr);
GPUBOOK_SAME_FIELD(Request, gpubook_count_request, buffer, buffer);
static_assert(sizeof(Request) == sizeof(gpubook_count_request), "a ring's requests are indexed both sides");
#undef GPUBOOK_SAME_FIELD
static_assert(kAccessWrite == 1 && kAccessAligned == 4, "the pass's flags, as check_inline.h reads them");

namespace {
__thread bool tls_checked = false;  // the running launch checks inline
__thread const Block* tls_block = nullptr; // the block whose warps seg_warp and shared_* describe
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
    tls_checked = checked;
    tls_block = nullptr;
    s.arena_lo = g_arena.base();
    s.arena_bytes = checked ? g_arena.bytes() : 0;
    s.shared_lo = s.shared_bytes = 0;
    s.hot = nullptr;
    s.loop_hot = reinterpret_cast<gpubook_thread_hot*>(&tls_loop_checks);
    forget_loop_folds();
    s.first_seg = g_first_segment;
    s.compact = checked && g_global ? reinterpret_cast<gpubook_race_entry*>(g_compact) : nullptr;
    s.global = reinterpret_cast<gpubook_race_word*>(g_global);
    s.unwritten = g_bits;
    s.unwritten_words = checked && g_any ? g_words : 0;
    inline_segments_moved();
    // Every slot is stale, and a failed launch may have left runs and tallies.
    for (gpubook_site_slot& slot : s.slots) {
        slot.site = GPUBOOK_NO_SITE;
        slot.join_site = nullptr;
        slot.run_warp = slot.run_next = GPUBOOK_NO_RUN;
        slot.known_loop = 0;
        slot.tally_requests = slot.tally_sectors = 0;
    }
    std::fill(std::begin(s.touched), std::end(s.touched), 0);
}

// The block that runs now: another one's warps (blocks that wait for each other take turns)
// have other segments and shared memory.
static void set_block(const Block* b) {
    if (b == tls_block) return;
    tls_block = b;
    inline_segments_moved();
    inline_sites_moved(); // its own counts' Sites
}

void inline_set_thread(const Thread* t) {
    if (!t) return;
    gpubook_check_state& s = gpubook_check_tls;
    set_block(t->block);
    s.thread = t->linear;
    s.hot = reinterpret_cast<gpubook_thread_hot*>(t->chk);
    if (!tls_checked) return;
    s.shared_lo = t->block->shared.base();
    s.shared_bytes = t->block->shared.capacity();
}

void inline_begin_loop(Block& b) {
    gpubook_check_state& s = gpubook_check_tls;
    set_block(&b);
    s.hot = s.loop_hot;
    if (++s.loop == 0) { // wrapped: no slot may know this loop
        for (gpubook_site_slot& slot : s.slots) slot.known_loop = 0;
        s.loop = 1;
    }
    // Only the worker counts these, and a thread that left the last loop took its own along.
    ThreadCounts& c = tls_loop_checks.counts;
    c.atomics = c.barriers = 0;
    if (!tls_checked) return;
    s.shared_lo = b.shared.base();
    s.shared_bytes = b.shared.capacity();
}

namespace {

// Ends the slot's run. `to_site`: its warp's lanes may still run the site (the loop ended in
// that warp, or the warp's next access at the site is not the run's): each lane joins the
// warp's Site, in order, as if it had called. Otherwise every lane of the warp is past it: the
// run is one finished request.
void end_run(Worker& w, gpubook_site_slot& slot, bool to_site) {
    const unsigned warp = slot.run_warp, next_thread = slot.run_next;
    slot.run_warp = slot.run_next = GPUBOOK_NO_RUN; // no lane joins it inline any more
    if (warp == GPUBOOK_NO_RUN) return;
    const Buffer* buf = static_cast<const Buffer*>(slot.buffer);
    const unsigned next = next_thread == GPUBOOK_NO_RUN ? kWarpSize : next_thread % kWarpSize;
    const uintptr_t line = slot.run_next_addr - next * slot.run_size;
    if (!to_site) {
        const uint32_t below_next = next == kWarpSize ? ~0u : (1u << next) - 1;
        const uint32_t lanes = below_next & ~((1u << slot.run_first_lane) - 1);
        if (slot.shared) counts_shared_line(*w.launch, lanes, line, slot.run_size, slot.run_write);
        else counts_line(*w.launch, lanes, line, slot.run_size, slot.run_write, buf);
        return;
    }
    for (unsigned lane = slot.run_first_lane; lane < next; lane++)
        counts_request(*w.launch, *w.blk, warp * kWarpSize + lane, line + lane * slot.run_size, slot.run_size,
                       slot.run_write, slot.shared, buf, slot.count_pc);
    slot.sited_warp = warp; // it has a Site now
}

// The whole-warp runs the inline code counted in the slot, into the launch's counts.
void flush_tally(Worker& w, gpubook_site_slot& slot) {
    if (!slot.tally_requests) return;
    counts_lines(*w.launch, slot.tally_requests, slot.tally_sectors, slot.run_size, slot.run_write,
                 static_cast<const Buffer*>(slot.buffer));
    slot.tally_requests = slot.tally_sectors = 0;
}

// Before the worker counts an access of the running thread at the slot's site.
inline void end_run_for(Worker& w, gpubook_site_slot& slot) {
    if (slot.run_warp != GPUBOOK_NO_RUN) end_run(w, slot, slot.run_warp == gpubook_check_tls.thread / kWarpSize);
}

// The running warp's race segment and its block's shared-memory fields.
void warp_segment(Block& b, unsigned warp) {
    gpubook_check_state& s = gpubook_check_tls;
    if (g_global) s.seg = current_segment(b, b.warps[warp]);
    s.block = uint32_t(b.linear);
    s.shared_epoch = b.warps[warp].epoch;
    s.shared_interval = b.shared_interval;
    s.shared_layout = b.shared_layout;
    s.shared_shadow = static_cast<gpubook_shared_word*>(b.shared_shadow);
    s.shared_unwritten = b.shared.unwritten_bytes();
    s.shared_unwritten_bits = b.shared.unwritten_bits();
    s.shared_noted_reads = b.shared.noted_reads();
    s.seg_warp = warp;
}

// After the worker checked an access of `n` bytes at `pc`, in `lo` + [0, bytes): what the
// site's next accesses need but the space's own fields.
void fill_slot(Worker& w, gpubook_site_slot& slot, unsigned site, uintptr_t lo, size_t bytes, size_t n, bool write,
               uintptr_t pc) {
    gpubook_check_state& s = gpubook_check_tls;
    const unsigned warp = w.current->linear / kWarpSize;
    slot.site = site;
    slot.lo = lo;
    slot.limit = bytes - n; // the access fits: the check returned
    slot.count_pc = pc;
    slot.join_site = nullptr;
    slot.run_warp = slot.run_next = GPUBOOK_NO_RUN; // end_run_for ended it
    slot.run_size = uint32_t(n);
    slot.run_write = write;
    if (w.loop) { // the access's warp has a Site now; the loop's later warps have not started
        slot.known_loop = s.loop;
        slot.sited_warp = warp;
    }
    warp_segment(*w.blk, warp);
}

void fill_global_slot(Worker& w, gpubook_site_slot& slot, unsigned site, const Buffer& buf, size_t n, bool write,
                      uintptr_t pc) {
    fill_slot(w, slot, site, buf.addr, buf.bytes, n, write, pc);
    slot.shared = 0;
    slot.buffer = &buf;
    slot.race_meta = g_global ? site_of(uint32_t(pc - w.launch->module_base)) << kGSiteShift : 0;
}

// A variable's slot, for an access the shadow covers (races.cpp race_check_shared); otherwise
// the slot stays empty and the site's accesses all come to the worker.
void fill_shared_slot(Worker& w, gpubook_site_slot& slot, unsigned site, uintptr_t a, size_t n, bool write,
                      uintptr_t pc) {
    const SharedMemory& shared = w.blk->shared;
    const SharedVar* v = shared.find(a, n);
    slot.site = GPUBOOK_NO_SITE;
    if (!v || v->addr + v->bytes - shared.base() > kSharedShadowWords * 4) return;
    fill_slot(w, slot, site, v->addr, v->bytes, n, write, pc);
    slot.shared = 1;
    slot.buffer = nullptr;
    slot.layout = w.blk->shared_layout;
    slot.shared_pc_bytes = shared_pc_part(*w.launch, pc) | 0xf; // a whole word
}

} // namespace

void inline_end_loop(Worker& w, bool to_sites) {
    gpubook_check_state& s = gpubook_check_tls;
    for (size_t word = 0; word < GPUBOOK_SITE_SLOTS / 64; word++) {
        for (uint64_t bits = s.touched[word]; bits; bits &= bits - 1) {
            gpubook_site_slot& slot = s.slots[word * 64 + size_t(__builtin_ctzll(bits))];
            end_run(w, slot, to_sites);
            flush_tally(w, slot);
        }
        s.touched[word] = 0;
    }
}

} // namespace gpubook::rt

using namespace gpubook::rt;

extern "C" void gpubook_rt_loop_fold(void) {
    ThreadCounts& c = tls_loop_checks.counts;
    if (!tls_loop_folded) {
        tls_loop_most = tls_loop_least = c;
        tls_loop_folded = true;
    } else {
        fold_max(tls_loop_most, c);
        fold_min(tls_loop_least, c);
    }
    uint64_t* last = gpubook_check_tls.loop_last;
    last[0] = c.global_loads, last[1] = c.global_stores, last[2] = c.shared_loads, last[3] = c.shared_stores;
    if (!tls_loop_checks.started) return;
    // The worker counted for it: the next thread starts from zero, and is folded whatever its
    // loads and stores (its other counts differ from this one's).
    c.atomics = c.barriers = 0;
    last[0] = ~uint64_t(0);
}

extern "C" void gpubook_rt_check_shared(const void* p, unsigned long n, unsigned flags, gpubook_site_slot* slot,
                                        unsigned site) {
    uintptr_t pc = call_site(__builtin_return_address(0));
    Worker* w = tls_worker;
    if (__builtin_expect(g_access_checks_off, 0) || !w || !w->blk) return;
    loop_sync(*w);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    end_run_for(*w, *slot); // the slot is the site's, or another site's now refilled
    flush_tally(*w, *slot);
    check_shared(*w, a, n, flags, pc); // the inline path saw it in the block's shared memory
    fill_shared_slot(*w, *slot, site, a, n, flags & kAccessWrite, pc);
}

extern "C" void gpubook_rt_check_slow(const void* p, unsigned long n, unsigned flags, gpubook_site_slot* slot,
                                      unsigned site) {
    uintptr_t pc = call_site(__builtin_return_address(0));
    Worker* w = tls_worker;
    if (__builtin_expect(g_access_checks_off, 0) || !w || !w->blk) return;
    loop_sync(*w);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    end_run_for(*w, *slot); // the slot is the site's, or another site's now refilled
    flush_tally(*w, *slot);
    const Buffer& buf = check_global(*w, a, n, flags, pc); // the inline path saw it in the arena
    fill_global_slot(*w, *slot, site, buf, n, flags & kAccessWrite, pc);
}

extern "C" void gpubook_rt_run_end(gpubook_site_slot* slot) {
    Worker* w = tls_worker;
    if (!w || !w->blk) return;
    end_run(*w, *slot, false);
}

extern "C" void gpubook_rt_warp_segment(void) {
    Worker* w = tls_worker;
    if (!w || !w->blk) return;
    warp_segment(*w->blk, gpubook_check_tls.thread / kWarpSize);
}

extern "C" void gpubook_rt_count(gpubook_site_slot* slot, const void* p, unsigned long n, unsigned flags) {
    Worker* w = tls_worker;
    if (__builtin_expect(g_access_checks_off, 0) || !w || !w->blk) return;
    const gpubook_check_state& s = gpubook_check_tls;
    const unsigned linear = s.thread, warp = linear / kWarpSize;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p), key = slot->count_pc << 1 | slot->shared;
    const bool write = flags & kAccessWrite;
    end_run_for(*w, *slot);
    if (s.hot == s.loop_hot) {
        // In a block loop: what the slot may know from here on (check_state.h known_loop).
        if (slot->known_loop != s.loop) {
            slot->known_loop = s.loop;
            slot->sited_warp = GPUBOOK_NO_RUN;
        }
        // A lane at a site its warp has not counted at: the first of a run.
        if (!counts_find_site(w->blk->counts, warp, key)) {
            gpubook_check_state& st = gpubook_check_tls;
            gpubook_begin_run(&st, unsigned(slot - st.slots), linear, a, n);
            return;
        }
        slot->sited_warp = warp;
    }
    // The Site this slot found last, when it is this warp's and has not moved: no lookup.
    Site* site = reinterpret_cast<Site*>(slot->join_site);
    if (!site || slot->join_warp != warp || slot->join_epoch != s.sites_epoch) {
        site = &counts_site(w->blk->counts, warp, key); // may move the Sites: first
        slot->join_site = reinterpret_cast<gpubook_count_site*>(site);
        slot->join_warp = warp;
        slot->join_epoch = s.sites_epoch;
    }
    counts_request_at(*w->launch, *w->blk, *site, linear % kWarpSize, a, n, write, slot->shared,
                      static_cast<const Buffer*>(slot->buffer));
}
