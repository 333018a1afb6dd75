// Check mode's checks compiled into the kernel (with the compiler pass, GPUBOOK_CHECK_PASS):
// runtime/pass/gpubook_pass.cpp calls __gpubook_chk(address, bytes, flags, site) before every
// load and store through a pointer that is not volatile, before the inliner runs, so each call
// becomes the code below at its access. The checks of the common global access (a buffer the
// site hit before, aligned, a word no other thread touched this launch) and of the common
// shared access (an aligned word of a variable the site hit before, no other thread's write
// since the last barrier) are done here, and their counts when the access is the next lane of
// its site's run (check_state.h); the worker does the rest of the counts (gpubook_rt_count), and
// the whole of any other access (gpubook_rt_check_slow, gpubook_rt_check_shared) as for
// ThreadSanitizer's hooks.
#ifndef GPUBOOK_CHECK_INLINE_H
#define GPUBOOK_CHECK_INLINE_H

#include "check_state.h"

// The pass's flags (worker/access/checks.h AccessFlags).
#define GPUBOOK_ACCESS_WRITE 1u
#define GPUBOOK_ACCESS_ALIGNED 4u
// A thread yields after this many accesses (checks.cpp kLockstepAccesses).
#define GPUBOOK_LOCKSTEP_ACCESSES 64u

#define GPUBOOK_CHECK_FN static inline __attribute__((always_inline, no_instrument_function))

extern "C" {
// Whether p may be device or shared memory. The pass folds it after the inliner: false for the
// address of a local (a callee's check of its `this`, inlined into the caller that owns the
// object) and in functions ThreadSanitizer leaves alone (a kernel's entry), else true. The worker
// defines it too (true), for a call the pass did not fold.
bool __gpubook_maybe_device(const void* p) __attribute__((const, nothrow, leaf));
}

namespace gpubook {
namespace device {

// A lane's access joins the request an earlier lane of its warp opened at the site, in the Site
// the worker found last (counts.cpp counts_request_at, its common case). False, having written
// nothing, when the worker must: a run of the slot's is open, the Site is another warp's or may
// have moved, or the request is not open yet (the lane is the first, or late).
GPUBOOK_CHECK_FN bool join_request(gpubook_check_state& s, gpubook_site_slot& slot, uint32_t thread, uintptr_t a,
                                   unsigned long n) {
    gpubook_count_site* site = slot.join_site;
    if (!site || slot.join_warp != thread >> 5 || slot.join_epoch != s.sites_epoch || slot.run_warp != GPUBOOK_NO_RUN)
        return false;
    const uint32_t lane = thread & 31;
    const uint32_t occ = site->occurrences[lane] > site->floor ? site->occurrences[lane] : site->floor;
    if (occ < site->retired || occ >= site->newest) return false;
    gpubook_count_request& r = site->ring_data[occ & site->ring_mask];
    if (!r.lanes) return false;
    site->occurrences[lane] = occ + 1;
    r.lanes |= 1u << lane;
    r.addr[lane] = a;
    if (slot.shared) return true;
    r.buffer[lane] = slot.buffer;
    if (a != r.line + lane * n || slot.buffer != r.line_buffer) r.in_line = false;
    return true;
}

// The access's warp-level request for the counts: the lane's turn in the slot's run of its
// warp's request (check_state.h), else the worker's counts, which cannot decline.
GPUBOOK_CHECK_FN void count_request(gpubook_check_state& s, gpubook_site_slot& slot, uint32_t thread, uintptr_t a,
                                    unsigned long n, unsigned flags, unsigned site) {
    const uint32_t warp = thread >> 5;
    if (thread == slot.run_next && a == slot.run_next_addr) {
        slot.run_next = gpubook_run_next(thread);
        slot.run_next_addr = a + n;
    } else if (s.hot == s.loop_hot && slot.known_loop == s.loop && slot.run_warp != warp &&
               slot.sited_warp != warp) {
        // A warp's first lane at the site, in a block loop, with no Site for it: a run begins.
        // The slot's run of an earlier warp is over (its lanes have all run).
        if (slot.run_warp != GPUBOOK_NO_RUN) {
            if (slot.run_next == GPUBOOK_NO_RUN && slot.run_first_lane == 0 && !slot.shared) { // a whole warp in line
                slot.tally_requests++;
                slot.tally_sectors += (slot.run_next_addr - 1) / 32 - (slot.run_next_addr - 32 * n) / 32 + 1;
            } else {
                gpubook_rt_run_end(&slot);
            }
        }
        gpubook_begin_run(&s, site % GPUBOOK_SITE_SLOTS, thread, a, n);
    } else if (!join_request(s, slot, thread, a, n)) {
        gpubook_rt_count(&slot, reinterpret_cast<const void*>(a), n, flags);
    }
}

// Decided: the access's never-written mark, race entry and thread counts.
GPUBOOK_CHECK_FN void commit_global(gpubook_thread_hot* hot, bool write, uint64_t* unwritten,
                                    uint64_t ubit, gpubook_race_entry* entry, gpubook_race_entry cur) {
    if (write && unwritten) *unwritten &= ~ubit;
    if (entry) *entry = cur;
    if (write) hot->global_stores++;
    else hot->global_loads++;
    hot->slice++;
}

// The common case of a global access at arena offset `off`: returns false, having written
// nothing, when the worker must do it.
GPUBOOK_CHECK_FN bool check_global_inline(gpubook_check_state& s, uintptr_t a, uintptr_t off, unsigned long n,
                                          unsigned flags, unsigned site, gpubook_site_slot& slot) {
    if (slot.site != site || a - slot.lo > slot.limit) return false;
    if ((flags & GPUBOOK_ACCESS_ALIGNED) && (a & (n - 1))) return false;
    const uintptr_t shift = a & 3, word = off >> 2; // the arena starts on a page
    if (shift + n > 4) return false; // more than one word
    const bool write = flags & GPUBOOK_ACCESS_WRITE;
    // Never written: a load of a marked word is a report; a store clears the mark.
    uint64_t* unwritten = nullptr;
    const uint64_t ubit = uint64_t(1) << (word & 63);
    if (word < s.unwritten_words) {
        unwritten = &s.unwritten[word >> 6];
        if (!write && (*unwritten & ubit)) return false;
    }
    gpubook_thread_hot* hot = s.hot;
    if (hot->slice + 1 >= GPUBOOK_LOCKSTEP_ACCESSES) return false; // the worker makes it yield
    const uint32_t thread = s.thread, warp = thread >> 5;
    // Races: the word's compact entry, kept only while one thread owns the word (races.cpp
    // one_thread, its same-segment cases).
    gpubook_race_entry* entry = nullptr;
    gpubook_race_entry cur = {0, 0};
    gpubook_race_word* full = nullptr; // a read joins the word's full shadow
    if (s.compact) {
        if (s.seg_warp != warp) gpubook_rt_warp_segment();
        entry = &s.compact[word];
        const gpubook_race_entry c = *entry;
        cur.seg = s.seg;
        cur.meta = (thread + 1) | (write ? GPUBOOK_RACE_WRITE : 0u) |
                   uint32_t(((1u << n) - 1) << shift) << GPUBOOK_RACE_BYTES_SHIFT | slot.race_meta;
        if (c.seg >= s.first_seg && !(c.meta & GPUBOOK_RACE_THREAD_MASK)) {
            // Threads share the word (a matrix many threads read): a read when nothing wrote it
            // this launch joins its reads (race_check_global's read).
            if (write) return false;
            full = &s.global[word];
            if (full->write.seg >= s.first_seg) return false;
            entry = nullptr; // stays expanded
        } else if (c.seg >= s.first_seg) {
            if ((c.meta & GPUBOOK_RACE_THREAD_MASK) != thread + 1 || c.seg != cur.seg) return false;
            const bool was_write = c.meta & GPUBOOK_RACE_WRITE;
            if (write) {
                if (!was_write && (c.meta & ~cur.meta & GPUBOOK_RACE_BYTES_MASK)) return false;
            } else if (was_write) {
                if (cur.meta & ~c.meta & GPUBOOK_RACE_BYTES_MASK) return false;
                entry = nullptr; // its own write of these bytes, this segment: the entry stays
            }
        }
    }
    commit_global(hot, write, unwritten, ubit, entry, cur);
    if (full) {
        // The last read stays in read1 when it is this thread's (the same linear thread, of this
        // segment or this block); another's moves to read2.
        const gpubook_race_entry r1 = full->read1;
        if (r1.seg >= s.first_seg &&
            ((r1.meta & GPUBOOK_RACE_THREAD_MASK) != thread + 1 ||
             (r1.seg != cur.seg && s.segments[r1.seg - s.first_seg].block != s.block)))
            full->read2 = r1;
        full->read1 = cur;
    }
    count_request(s, slot, thread, a, n, flags, site);
    return true;
}

// Whether a shadow entry is another thread's access.
GPUBOOK_CHECK_FN bool another_thread(gpubook_shared_access e, uint32_t me) {
    return e.who && (e.who & GPUBOOK_SHARED_THREAD_MASK) != me;
}

// The common case of a shared-memory access: an aligned word of a variable the site hit before
// in this block (for a load, not all four bytes unwritten) that no other thread touched since
// the last barrier, or that only others read (races.cpp check_shared_word, its cases without
// another thread's write). Returns false, having written nothing, when the worker must do it.
GPUBOOK_CHECK_FN bool check_shared_inline(gpubook_check_state& s, uintptr_t a, unsigned long n, unsigned flags,
                                          unsigned site, gpubook_site_slot& slot) {
    const uint32_t thread = s.thread, warp = thread >> 5, me = thread + 1;
    if (s.seg_warp != warp) gpubook_rt_warp_segment(); // the block's shared fields too
    if (slot.site != site || slot.layout != s.shared_layout || a - slot.lo > slot.limit) return false;
    if (n != 4 || (a & 3)) return false;
    gpubook_shared_word* shadow = s.shared_shadow;
    if (!shadow) return false;
    const bool write = flags & GPUBOOK_ACCESS_WRITE;
    // Never written (worker/shared_memory.h): a load of four unwritten bytes is noted by the
    // worker; a store clears their bits, unless a noted read waits for another thread's store.
    uint64_t* unwritten = nullptr;
    const uint64_t umask = uint64_t(0xf) << ((a - s.shared_lo) & 63);
    if (*s.shared_unwritten) {
        uint64_t* bits = &s.shared_unwritten_bits[(a - s.shared_lo) >> 6];
        if (!write) {
            if ((*bits & umask) == umask) return false;
        } else {
            if (*s.shared_noted_reads) return false;
            unwritten = bits;
        }
    }
    gpubook_thread_hot* hot = s.hot;
    if (hot->slice + 1 >= GPUBOOK_LOCKSTEP_ACCESSES) return false; // the worker makes it yield
    gpubook_shared_word& w = shadow[(a - s.shared_lo) >> 2];
    const bool fresh = w.interval != s.shared_interval;
    if (!fresh && (another_thread(w.write, me) ||
                   (write && (another_thread(w.read1, me) || another_thread(w.read2, me)))))
        return false;
    const gpubook_shared_access cur = {slot.shared_pc_bytes, uint16_t(me | (write ? GPUBOOK_SHARED_WRITE : 0u)),
                                       s.shared_epoch};
    if (fresh) { // nothing since the last barrier: this access starts the word
        w.interval = s.shared_interval;
        w.write = write ? cur : gpubook_shared_access{};
        w.read1 = write ? gpubook_shared_access{} : cur;
        w.read2 = gpubook_shared_access{};
    } else if (write) {
        w.write = cur;
    } else if ((w.read1.who & GPUBOOK_SHARED_THREAD_MASK) != me) {
        w.read2 = w.read1;
        w.read1 = cur;
    } else {
        w.read1 = cur;
    }
    if (unwritten) {
        *s.shared_unwritten -= size_t(__builtin_popcountll(*unwritten & umask));
        *unwritten &= ~umask;
    }
    if (write) hot->shared_stores++;
    else hot->shared_loads++;
    hot->slice++;
    count_request(s, slot, thread, a, n, flags, site);
    return true;
}

} // namespace device
} // namespace gpubook

extern "C" {
// `used`: the pass calls it after the front end would have dropped an unreferenced function.
// Not always_inline: g++'s inliner puts it into the kernel where the unit's growth allows (a
// small kernel, every access), and calls it where a kernel of many force-inlined helpers would
// otherwise grow past what the compiler can build in reasonable time.
static inline __attribute__((no_instrument_function, used)) void __gpubook_chk(const void* p, unsigned long n, unsigned flags, unsigned site) {
    if (!__gpubook_maybe_device(p)) return;
    gpubook_check_state& s = gpubook_check_tls;
    const uintptr_t a = uintptr_t(p), off = a - s.arena_lo;
    gpubook_site_slot& slot = s.slots[site % GPUBOOK_SITE_SLOTS];
    if (off >= s.arena_bytes) {
        // Anything neither device nor shared memory (a local, a host global) is not checked.
        if (a - s.shared_lo < s.shared_bytes && !::gpubook::device::check_shared_inline(s, a, n, flags, site, slot))
            gpubook_rt_check_shared(p, n, flags, &slot, site);
        return;
    }
    if (!::gpubook::device::check_global_inline(s, a, off, n, flags, site, slot))
        gpubook_rt_check_slow(p, n, flags, &slot, site);
}
}

#undef GPUBOOK_CHECK_FN
#endif
