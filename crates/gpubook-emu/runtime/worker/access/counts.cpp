#include "counts.h"

#include "../arena.h"
#include "../json.h"
#include "../worker.h"
#include "inline_checks.h"

#include <algorithm>
#include <cstring>

namespace gpubook::rt {

namespace {

// A site keeps at most this many unfinished requests: lanes run at most a few dozen accesses
// apart (the scheduler makes a thread yield every kLockstepAccesses, see checks.cpp), so a
// request this old has every lane it will ever get (the others skipped the instruction).
constexpr uint32_t kMaxAge = 1024;

void add(GlobalTally& t, uint64_t bytes, uint64_t unique, uint64_t sectors, uint64_t requests = 1) {
    t.requests += requests;
    t.bytes += bytes;
    t.unique_bytes += unique;
    t.sectors += sectors;
}

// Distinct bytes among the lanes of `r` whose buffer is `b` (all lanes when b is null).
uint64_t unique_bytes(const Request& r, const Buffer* b, bool any_buffer) {
    uintptr_t starts[32];
    unsigned n = 0;
    for (unsigned l = 0; l < 32; l++)
        if ((r.lanes >> l & 1) && (any_buffer || r.buffer[l] == b)) starts[n++] = r.addr[l];
    if (!std::is_sorted(starts, starts + n)) std::sort(starts, starts + n);
    uint64_t total = 0;
    uintptr_t covered = 0; // end of the bytes counted so far
    for (unsigned i = 0; i < n; i++) {
        uintptr_t from = std::max(starts[i], covered), to = starts[i] + r.size;
        if (to > from) total += to - from;
        covered = std::max(covered, to);
    }
    return total;
}

BufferTally& tally_for(LaunchCounts& c, const Buffer* b) {
    for (BufferTally& t : c.buffers)
        if (t.addr == b->addr) return t;
    c.buffers.emplace_back();
    c.buffers.back().addr = b->addr;
    c.buffers.back().label = b->label;
    return c.buffers.back();
}

// The most usual request of all: every lane, one after another (lane i at lane 0's address +
// i x size), in one buffer (tracked as the lanes join). Counted without a pass over the lanes.
bool finish_global_contiguous(LaunchCounts& c, const Request& r) {
    if (r.lanes != ~0u || !r.in_line) return false;
    const uintptr_t a0 = r.line;
    const Buffer* buffer = r.line_buffer;
    uint64_t bytes = 32ull * r.size, sectors = (a0 + bytes - 1) / 32 - a0 / 32 + 1;
    add(r.write ? c.global_stores : c.global_loads, bytes, bytes, sectors);
    if (buffer) {
        BufferTally& t = tally_for(c, buffer);
        add(r.write ? t.stores : t.loads, bytes, bytes, sectors);
    }
    return true;
}

// The usual request: its lanes in address order (lane i's address at or above lane i-1's), in
// one buffer. Counts it in one pass and returns true; false leaves it to finish_global.
bool finish_global_in_order(LaunchCounts& c, const Request& r) {
    const Buffer* buffer = nullptr;
    bool any = false;
    unsigned lanes = 0;
    uintptr_t prev = 0, covered = 0, last_sector = 0; // bytes below `covered` are counted
    uint64_t unique = 0, sectors = 0;
    for (unsigned l = 0; l < 32; l++) {
        if (!(r.lanes >> l & 1)) continue;
        uintptr_t a = r.addr[l], end = a + r.size;
        if (!any) {
            buffer = r.buffer[l];
            covered = a;
            last_sector = a / 32 - 1; // a sector number below the first
        } else if (r.buffer[l] != buffer || a < prev) {
            return false;
        }
        any = true;
        prev = a;
        lanes++;
        if (end > covered) {
            unique += end - std::max(a, covered);
            covered = end;
        }
        uintptr_t s0 = std::max(a / 32, last_sector + 1), s1 = (end - 1) / 32;
        if (s1 >= s0) {
            sectors += s1 - s0 + 1;
            last_sector = s1;
        }
    }
    uint64_t bytes = uint64_t(lanes) * r.size;
    add(r.write ? c.global_stores : c.global_loads, bytes, unique, sectors);
    if (buffer) {
        BufferTally& t = tally_for(c, buffer);
        add(r.write ? t.stores : t.loads, bytes, unique, sectors);
    }
    return true;
}

void finish_global(LaunchCounts& c, const Request& r) {
    if (finish_global_contiguous(c, r) || finish_global_in_order(c, r)) return;
    // (buffer, sector) pairs: a lane's access may straddle two sectors.
    std::pair<const Buffer*, uintptr_t> secs[64];
    unsigned n = 0, lanes = 0;
    for (unsigned l = 0; l < 32; l++) {
        if (!(r.lanes >> l & 1)) continue;
        lanes++;
        uintptr_t first = r.addr[l] / 32, last = (r.addr[l] + r.size - 1) / 32;
        for (uintptr_t s = first; s <= last && n < 64; s++) secs[n++] = {r.buffer[l], s};
    }
    if (!std::is_sorted(secs, secs + n)) std::sort(secs, secs + n); // coalesced lanes come sorted
    unsigned distinct = unsigned(std::unique(secs, secs + n) - secs);
    uint64_t unique = unique_bytes(r, nullptr, true);
    add(r.write ? c.global_stores : c.global_loads, uint64_t(lanes) * r.size, unique, distinct);
    bool one_buffer = n == 0 || secs[0].first == secs[distinct - 1].first;
    // Per buffer: the request counts once for each buffer its lanes touched.
    for (unsigned i = 0; i < distinct;) {
        const Buffer* b = secs[i].first;
        unsigned j = i;
        while (j < distinct && secs[j].first == b) j++;
        if (b) {
            uint64_t bytes = 0;
            for (unsigned l = 0; l < 32; l++)
                if ((r.lanes >> l & 1) && r.buffer[l] == b) bytes += r.size;
            BufferTally& t = tally_for(c, b);
            add(r.write ? t.stores : t.loads, bytes, one_buffer ? unique : unique_bytes(r, b, false), j - i);
        }
        i = j;
    }
}

void add_shared(LaunchCounts& c, const Request& r, unsigned lanes, unsigned most, unsigned distinct) {
    SharedTally& t = r.write ? c.shared_stores : c.shared_loads;
    t.requests++;
    t.bytes += uint64_t(lanes) * r.size;
    t.wavefronts += most;
    t.ideal_wavefronts += std::max(1u, (distinct + 31) / 32);
}

// Any request: every word each lane touches, sorted, distinct words per bank.
void finish_shared_words(LaunchCounts& c, const Request& r) {
    uintptr_t words[128];
    unsigned n = 0, lanes = 0;
    for (unsigned l = 0; l < 32; l++) {
        if (!(r.lanes >> l & 1)) continue;
        lanes++;
        uintptr_t first = r.addr[l] / 4, last = (r.addr[l] + r.size - 1) / 4;
        for (uintptr_t w = first; w <= last && n < 128; w++) words[n++] = w;
    }
    if (!std::is_sorted(words, words + n)) std::sort(words, words + n);
    unsigned distinct = unsigned(std::unique(words, words + n) - words);
    unsigned per_bank[32] = {};
    unsigned most = 0;
    for (unsigned i = 0; i < distinct; i++) most = std::max(most, ++per_bank[words[i] % 32]);
    add_shared(c, r, lanes, most, distinct);
}

void finish_shared(LaunchCounts& c, const Request& r) {
    // Banks are 4 bytes wide, 32 of them; a wavefront serves one word per bank. Lanes reading
    // the same word share it (a broadcast), so only distinct words count. Most requests are
    // one aligned word a lane with no two words in a bank (consecutive, broadcast, or lanes
    // repeating each other's words): one pass sees that; anything else takes the sort.
    if (r.size != 4) return finish_shared_words(c, r);
    constexpr uintptr_t kNone = UINTPTR_MAX; // no word index is this
    uintptr_t in_bank[32];
    std::fill(in_bank, in_bank + 32, kNone);
    unsigned lanes = 0, distinct = 0;
    for (unsigned l = 0; l < 32; l++) {
        if (!(r.lanes >> l & 1)) continue;
        if (r.addr[l] & 3) return finish_shared_words(c, r);
        uintptr_t w = r.addr[l] / 4;
        uintptr_t& seen = in_bank[w % 32];
        if (seen == kNone) {
            seen = w;
            distinct++;
        } else if (seen != w) {
            return finish_shared_words(c, r); // a bank conflict: count it exactly
        }
        lanes++;
    }
    add_shared(c, r, lanes, distinct ? 1 : 0, distinct);
}

void finish(LaunchCounts& c, const Request& r) {
    if (r.shared) finish_shared(c, r);
    else finish_global(c, r);
}

// Finishes front requests that every live lane of the warp joined, or that are too old to
// get more lanes.
__attribute__((noinline)) void retire_front(LaunchCounts& c, Site& s, unsigned live) {
    while (s.retired < s.newest) {
        const Request& r = s.request(s.retired);
        if ((r.lanes & live) != live && s.newest - s.retired < kMaxAge) break;
        if (r.lanes) finish(c, r);
        s.retired++;
    }
}

// Opens requests up to occurrence `occ` (a lane ran the instruction once more than any before
// it). First the front goes while every live lane has joined it, or while kMaxAge requests are
// open: a request every live lane joined gets no more lanes, so it may wait until here (once a
// request, not once an access) to be counted. Grows the ring when the open requests would not fit.
__attribute__((noinline)) void open_upto(LaunchCounts& c, Site& s, uint32_t occ, unsigned live) {
    retire_front(c, s, live);
    size_t needed = size_t(occ - s.retired) + 1;
    if (needed > s.ring.size()) {
        size_t size = std::max<size_t>(8, s.ring.size());
        while (size < needed) size *= 2;
        std::vector<Request> ring(size);
        for (uint32_t o = s.retired; o < s.newest; o++) ring[o & (size - 1)] = s.request(o);
        s.ring.swap(ring);
        s.ring_data = s.ring.data();
        s.ring_mask = uint32_t(size - 1);
    }
    for (uint32_t o = s.newest; o <= occ; o++) {
        Request& r = s.request(o);
        r.lanes = 0;
        r.occurrence = o;
    }
    s.newest = occ + 1;
}

// A new site of this block for (warp, key), reusing an earlier block's Site and its memory.
uint32_t new_site(BlockCounts& bc, unsigned warp, uintptr_t key) {
    if (bc.used == bc.sites.size()) {
        bc.sites.emplace_back();
        inline_sites_moved(); // a bigger vector moves them all
    }
    Site& s = bc.sites[bc.used];
    s.ring_data = s.ring.data();
    s.retired = s.newest = s.floor = 0;
    s.key = key;
    s.warp = warp;
    std::fill(s.occurrences, s.occurrences + 32, 0u);
    return uint32_t(bc.used++);
}

inline size_t id_hash(uintptr_t key, size_t mask) { return size_t((key * 0x9E3779B97F4A7C15ull) >> 32) & mask; }

// The dense id of `key`, assigned on first sight.
__attribute__((noinline)) uint32_t new_id(BlockCounts& bc, uintptr_t key) {
    if ((bc.ids + 1) * 2 > bc.id_keys.size()) { // grow the table, keep the ids
        std::vector<uintptr_t> keys(std::max<size_t>(64, bc.id_keys.size() * 2), 0);
        std::vector<uint32_t> values(keys.size());
        size_t mask = keys.size() - 1;
        for (size_t i = 0; i < bc.id_keys.size(); i++) {
            if (!bc.id_keys[i]) continue;
            size_t j = id_hash(bc.id_keys[i], mask);
            while (keys[j]) j = (j + 1) & mask;
            keys[j] = bc.id_keys[i];
            values[j] = bc.id_values[i];
        }
        bc.id_keys.swap(keys);
        bc.id_values.swap(values);
        bc.id_mask = bc.id_keys.size() - 1;
    }
    size_t mask = bc.id_keys.size() - 1, i = id_hash(key, mask);
    while (bc.id_keys[i]) i = (i + 1) & mask;
    bc.id_keys[i] = key;
    bc.id_values[i] = bc.ids;
    if (bc.ids >= bc.stride) { // widen every warp's row of slots
        uint32_t stride = std::max(16u, bc.stride * 2);
        std::vector<SiteSlot> slots(size_t(bc.warps) * stride);
        for (size_t wp = 0; wp < bc.warps; wp++)
            std::copy_n(bc.slots.begin() + long(wp * bc.stride), bc.stride, slots.begin() + long(wp * stride));
        bc.slots.swap(slots);
        bc.stride = stride;
    }
    return bc.ids++;
}

inline uint32_t id_of(BlockCounts& bc, uintptr_t key) {
    if (__builtin_expect(bc.id_mask != 0, 1)) {
        const uintptr_t* keys = bc.id_keys.data();
        for (size_t i = id_hash(key, bc.id_mask); keys[i]; i = (i + 1) & bc.id_mask)
            if (keys[i] == key) return bc.id_values[i];
    }
    return new_id(bc, key);
}

unsigned live_lanes(const Block& b, unsigned warp) {
    const Warp& w = b.warps[warp];
    return w.exists & ~w.exited;
}

void fold_max(ThreadCounts& m, const ThreadCounts& t) {
    m.global_loads = std::max(m.global_loads, t.global_loads);
    m.global_stores = std::max(m.global_stores, t.global_stores);
    m.shared_loads = std::max(m.shared_loads, t.shared_loads);
    m.shared_stores = std::max(m.shared_stores, t.shared_stores);
    m.atomics = std::max(m.atomics, t.atomics);
    m.barriers = std::max(m.barriers, t.barriers);
}

void fold_min(ThreadCounts& m, const ThreadCounts& t) {
    m.global_loads = std::min(m.global_loads, t.global_loads);
    m.global_stores = std::min(m.global_stores, t.global_stores);
    m.shared_loads = std::min(m.shared_loads, t.shared_loads);
    m.shared_stores = std::min(m.shared_stores, t.shared_stores);
    m.atomics = std::min(m.atomics, t.atomics);
    m.barriers = std::min(m.barriers, t.barriers);
}

void write_global(Json& j, const char* key, const GlobalTally& t) {
    j.begin_object(key)
        .unum("requests", t.requests)
        .unum("bytes", t.bytes)
        .unum("unique_bytes", t.unique_bytes)
        .unum("sectors", t.sectors)
        .end_object();
}

void write_shared(Json& j, const char* key, const SharedTally& t) {
    j.begin_object(key)
        .unum("requests", t.requests)
        .unum("bytes", t.bytes)
        .unum("wavefronts", t.wavefronts)
        .unum("ideal_wavefronts", t.ideal_wavefronts)
        .end_object();
}

void write_threads(Json& j, const char* key, const ThreadCounts& t) {
    j.begin_object(key)
        .unum("global_loads", t.global_loads)
        .unum("global_stores", t.global_stores)
        .unum("shared_loads", t.shared_loads)
        .unum("shared_stores", t.shared_stores)
        .unum("atomics", t.atomics)
        .unum("barriers", t.barriers)
        .end_object();
}

} // namespace

void BlockCounts::reset(unsigned nwarps) {
    used = 0;
    inline_sites_moved(); // each is another warp's, or another site's, from here on
    if (nwarps != warps) {
        warps = nwarps;
        slots.assign(size_t(warps) * stride, SiteSlot());
        std::fill(std::begin(cache), std::end(cache), SiteCacheEntry());
        generation = 0;
    }
    if (++generation == 0) { // wrapped: clear, so no slot is mistaken for this block's
        std::fill(slots.begin(), slots.end(), SiteSlot());
        std::fill(std::begin(cache), std::end(cache), SiteCacheEntry());
        generation = 1;
    }
}

void BlockCounts::forget_ids() {
    ids = 0;
    std::fill(id_keys.begin(), id_keys.end(), uintptr_t(0));
}

void counts_begin_launch(Launch& l) {
    l.counts = LaunchCounts();
    ThreadCounts& m = l.counts.per_thread_min;
    m.global_loads = m.global_stores = m.shared_loads = m.shared_stores = m.atomics = m.barriers = UINT64_MAX;
}

namespace {

// A lane that comes to a request already finished (it ran the instruction much later than
// its warp's other lanes): the request is counted again with this lane alone.
__attribute__((noinline)) void count_late(LaunchCounts& c, uintptr_t addr, size_t n, bool write, bool shared,
                                          const Buffer* buffer, unsigned lane) {
    Request late;
    late.size = uint32_t(n);
    late.write = write;
    late.shared = shared;
    late.lanes = 1u << lane;
    late.addr[lane] = addr;
    late.buffer[lane] = buffer;
    finish(c, late);
}

inline Site& site_of(BlockCounts& bc, unsigned warp, uintptr_t key) {
    SiteCacheEntry& e = bc.cache[(key * 0x9E3779B97F4A7C15ull) >> 60];
    if (__builtin_expect(e.key == key && e.warp == warp && e.generation == bc.generation, 1)) return bc.sites[e.site];
    uint32_t id = id_of(bc, key);
    SiteSlot& slot = bc.slots[size_t(warp) * bc.stride + id];
    if (__builtin_expect(slot.generation != bc.generation, 0)) {
        slot.site = new_site(bc, warp, key);
        slot.generation = bc.generation;
    }
    e = SiteCacheEntry{key, warp, bc.generation, slot.site};
    return bc.sites[slot.site];
}

} // namespace

void counts_access(Launch& l, Block& b, Thread& t, uintptr_t addr, size_t n, bool write, bool shared,
                   const Buffer* buffer, uintptr_t pc) {
    if (shared) (write ? t.chk->counts.shared_stores : t.chk->counts.shared_loads)++;
    else (write ? t.chk->counts.global_stores : t.chk->counts.global_loads)++;
    counts_request(l, b, t.linear, addr, n, write, shared, buffer, pc);
}

void counts_request(Launch& l, Block& b, unsigned linear, uintptr_t addr, size_t n, bool write, bool shared,
                    const Buffer* buffer, uintptr_t pc) {
    unsigned warp = linear / kWarpSize, lane = linear % kWarpSize;
    uintptr_t key = (pc << 1) | (shared ? 1 : 0);
    counts_request_at(l, b, site_of(b.counts, warp, key), lane, addr, n, write, shared, buffer);
}

Site& counts_site(BlockCounts& bc, unsigned warp, uintptr_t key) { return site_of(bc, warp, key); }

void counts_request_at(Launch& l, Block& b, Site& s, unsigned lane, uintptr_t addr, size_t n, bool write,
                       bool shared, const Buffer* buffer) {
    const unsigned warp = s.warp;
    uint32_t occ = std::max(s.occurrences[lane], s.floor);
    s.occurrences[lane] = occ + 1;
    if (__builtin_expect(occ < s.retired, 0)) {
        count_late(l.counts, addr, n, write, shared, buffer, lane);
        return;
    }
    if (occ >= s.newest) open_upto(l.counts, s, occ, live_lanes(b, warp));
    Request* r = &s.request(occ);
    if (!r->lanes) {
        r->size = uint32_t(n);
        r->write = write;
        r->shared = shared;
        if (!shared) {
            r->line = addr - lane * n;
            r->line_buffer = buffer;
            r->in_line = true;
        }
    }
    r->lanes |= 1u << lane;
    r->addr[lane] = addr;
    if (shared) return; // shared requests never read buffers: one cache line less
    r->buffer[lane] = buffer;
    // Coalesced kernels always take this branch one way: cheaper than an update every time.
    if (__builtin_expect(addr != r->line + lane * n || buffer != r->line_buffer, 0)) r->in_line = false;
}

void counts_line(Launch& l, uint32_t lanes, uintptr_t line, size_t n, bool write, const Buffer* buffer) {
    Request r;
    r.size = uint32_t(n);
    r.write = write;
    r.lanes = lanes;
    r.in_line = true;
    r.line = line;
    r.line_buffer = buffer;
    if (lanes != ~0u) { // finish's passes over the lanes read them
        for (unsigned lane = 0; lane < 32; lane++) {
            r.addr[lane] = line + lane * n;
            r.buffer[lane] = buffer;
        }
    }
    finish(l.counts, r);
}

void counts_shared_line(Launch& l, uint32_t lanes, uintptr_t line, size_t n, bool write) {
    Request r;
    r.size = uint32_t(n);
    r.write = write;
    r.shared = true;
    r.lanes = lanes;
    for (unsigned lane = 0; lane < 32; lane++) r.addr[lane] = line + lane * n;
    finish(l.counts, r);
}

void counts_lines(Launch& l, uint64_t requests, uint64_t sectors, size_t n, bool write, const Buffer* buffer) {
    const uint64_t bytes = requests * 32 * n;
    add(write ? l.counts.global_stores : l.counts.global_loads, bytes, bytes, sectors, requests);
    if (!buffer) return;
    BufferTally& t = tally_for(l.counts, buffer);
    add(write ? t.stores : t.loads, bytes, bytes, sectors, requests);
}

Site* counts_find_site(BlockCounts& bc, unsigned warp, uintptr_t key) {
    const SiteCacheEntry& e = bc.cache[(key * 0x9E3779B97F4A7C15ull) >> 60];
    if (e.key == key && e.warp == warp && e.generation == bc.generation) return &bc.sites[e.site];
    const uint32_t id = id_of(bc, key); // first: it may widen the rows
    const SiteSlot& slot = bc.slots[size_t(warp) * bc.stride + id];
    return slot.generation == bc.generation ? &bc.sites[slot.site] : nullptr;
}

void counts_atomic(Launch& l, Thread& t, bool shared, const Buffer* buffer) {
    t.chk->counts.atomics++;
    if (shared) {
        l.counts.shared_atomics++;
    } else {
        l.counts.global_atomics++;
        if (buffer) tally_for(l.counts, buffer).atomics++;
    }
}

void counts_converged(Launch& l, Block& b, int warp) {
    for (size_t k = 0; k < b.counts.used; k++) {
        Site& s = b.counts.sites[k];
        if (warp >= 0 && s.warp != unsigned(warp)) continue;
        for (uint32_t o = s.retired; o < s.newest; o++)
            if (s.request(o).lanes) finish(l.counts, s.request(o));
        // The lanes meet here: whatever each ran before, their next executions line up again.
        s.retired = s.floor = s.newest;
    }
}

void counts_block_end(Launch& l, Block& b) {
    ThreadCounts most = l.counts.per_thread_max, least = l.counts.per_thread_min;
    const ThreadCounts* folded = nullptr; // the last thread folded in
    // A block whose threads all ran in block loops was folded there, thread by thread.
    const unsigned n = b.folded_count == b.nthreads ? 0 : b.nthreads;
    uint64_t exited = b.nthreads - n;
    for (unsigned i = 0; i < n; i++) {
        if (b.states[i] != ThreadState::Exited) continue;
        exited++;
        if (b.folded[i]) continue; // ended inside a block loop: folded there (inline_fold_loops)
        const ThreadCounts& c = b.checks[i].counts;
        // Threads of a block mostly made the same accesses: one compare, not twelve.
        if (folded && std::memcmp(folded, &c, sizeof c) == 0) continue;
        fold_max(most, c);
        fold_min(least, c);
        folded = &c;
    }
    inline_fold_loops(most, least);
    l.counts.threads += exited;
    l.counts.per_thread_max = most;
    l.counts.per_thread_min = least;
}

void counts_write(Json& j, const LaunchCounts& c) {
    j.begin_object("counts");
    j.unum("threads", c.threads);
    j.begin_object("global");
    write_global(j, "loads", c.global_loads);
    write_global(j, "stores", c.global_stores);
    j.unum("atomics", c.global_atomics).end_object();
    j.begin_object("shared");
    write_shared(j, "loads", c.shared_loads);
    write_shared(j, "stores", c.shared_stores);
    j.unum("atomics", c.shared_atomics).end_object();
    write_threads(j, "per_thread_max", c.per_thread_max);
    write_threads(j, "per_thread_min", c.threads ? c.per_thread_min : ThreadCounts());
    // In address order, whatever order their requests ended in.
    std::vector<const BufferTally*> buffers;
    for (const BufferTally& b : c.buffers) buffers.push_back(&b);
    std::sort(buffers.begin(), buffers.end(),
              [](const BufferTally* x, const BufferTally* y) { return x->addr < y->addr; });
    j.begin_array("buffers");
    for (const BufferTally* bp : buffers) {
        const BufferTally& b = *bp;
        j.begin_object().unum("addr", b.addr).str("label", b.label.c_str());
        write_global(j, "loads", b.loads);
        write_global(j, "stores", b.stores);
        j.unum("atomics", b.atomics).end_object();
    }
    j.end_array();
    j.end_object();
}

} // namespace gpubook::rt
