#include "races.h"

#include "../arena.h"
#include "../shadow_space.h"
#include "checks.h"
#include "../worker.h"
#include "inline_checks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

namespace gpubook::rt {

namespace {

constexpr uint16_t kWrite = 1u << 13, kSync = 1u << 14, kVolatile = 1u << 15, kThreadMask = (1u << 13) - 1;

// An access as a report names it: block, barrier epoch, block clock, warp epoch, thread,
// kind and pc. Global memory's shadow stores it in 8 bytes (GlobalAccess); shared memory's in
// its own form (SharedAccess).
struct Access {
    uint32_t block;
    uint32_t epoch;
    uint32_t clock; // the block's clock (races.h) at the access
    uint32_t pc;    // offset from the kernel's .so base
    uint16_t warp_epoch;
    uint16_t who; // thread + 1 (0: no access), | kWrite | kSync | kVolatile
    // The bytes of the word accessed (bit k: byte k). Threads that store neighbouring bytes
    // (a u8 image, one pixel per thread) do not race: CUDA stores are byte-granular. Only the
    // last write is kept, so a read racing with an earlier write to other bytes of the word
    // can be missed.
    uint8_t bytes;
};

// Global memory. What an access's block, barrier epoch, block clock and warp epoch were is the
// same for every access a warp makes between two events that change one of them (a barrier, a
// fence or release of its block, a collective of the warp): a segment, numbered across
// launches and described once in g_segments. A shadow entry is then the segment and the
// thread, kind, bytes and site (the instruction, an index into g_site_pcs) in 8 bytes, and a
// word's last write and last two reads 24 bytes (76 before segments, the data 19 times over:
// a 16M-element vector add touched 3.6 GB of shadow). An entry whose segment is below the
// launch's first belongs to an earlier launch and reads as no access, so nothing is cleared
// between launches.
struct Segment {
    uint32_t block;
    uint32_t epoch;
    uint32_t clock;
    uint32_t warp_epoch;
};
// GlobalAccess::meta: thread + 1 (blocks have at most 1024 threads), write, sync, bytes,
// volatile, site.
constexpr uint32_t kGThreadMask = (1u << 11) - 1, kGWrite = 1u << 11, kGSync = 1u << 12, kGBytesShift = 13,
                   kGVolatile = 1u << 17, kGSiteShift = 18, kGMaxSites = (1u << 14) - 1;
static_assert(kAccessWrite << 13 == kWrite && kAccessSync << 13 == kSync && kAccessVolatile << 10 == kVolatile,
              "who_of shifts the access flags into place");
static_assert(kAccessWrite << 11 == kGWrite && kAccessSync << 11 == kGSync && kAccessVolatile << 12 == kGVolatile,
              "race_check_global shifts the access flags into place");
struct GlobalAccess {
    uint32_t seg;
    uint32_t meta;
};
struct GlobalWord {
    GlobalAccess write, read1, read2;
};
static_assert(sizeof(GlobalWord) == 24, "three entries of 8 bytes");
// Most words of a launch are touched by one thread only (a vector add's every word, the output
// of nearly any kernel), and for those one entry says all a later access must be checked
// against: its last write, or its last read when it only read, as GlobalWord's entries would
// (a thread's later write, of at least the bytes it read, orders everything it did before for
// whoever is ordered after the write). So each word first has a compact entry, 8 bytes: the
// word's one thread's last access this launch; a second thread, or a read after a write of an
// earlier segment, moves the word to its GlobalWord (the entry then keeps this launch's
// segment and no thread: `expanded`). A 16M-element vector add touches 400 MB of shadow, not
// 1.2 GB.
constexpr uint32_t kGBytesMask = 0xfu << kGBytesShift;

// Shared memory is the block's own, so its shadow needs neither a block nor a clock, and the
// interval (races.h: a block's stretch between two barriers, numbered across all blocks) is the
// word's first test: a word last touched in another interval cannot conflict and is taken over.
// 32 bytes a word, against global memory's 76.
struct SharedAccess {
    uint32_t pc_bytes; // offset from the kernel's .so base << 4 | the bytes of the word accessed
    uint16_t who;      // as Access::who
    uint16_t warp_epoch;
};
struct SharedWord {
    uint64_t interval;
    SharedAccess write, read1, read2;
};
static_assert(sizeof(SharedWord) == 32, "two shared words a cache line");

// Shadows are reserved address space (MAP_NORESERVE); only touched pages use memory.
void* reserve(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

ShadowSpace g_global_space(sizeof(GlobalWord), 4), g_compact_space(sizeof(GlobalAccess), 4);
// One GlobalWord and one compact entry per 4 bytes of the arena, up to g_global_words; null for
// a launch whose buffers reach past what the shadows could cover (races_unchecked says so).
GlobalWord* g_global = nullptr;
GlobalAccess* g_compact = nullptr;
size_t g_global_words = 0;
bool g_shared_refused = false; // a block of this launch ran without a shared-memory shadow
size_t g_touched_lo = SIZE_MAX, g_touched_hi = 0; // words of the buffers this launch accessed
size_t g_ever_lo = SIZE_MAX, g_ever_hi = 0; // what any launch touched, for a renumbering
// The segments of the running launch: g_segments[i] is segment g_first_segment + i. Segment 0
// is never handed out, so a zeroed shadow page is no access.
std::vector<Segment> g_segments;
uint32_t g_first_segment = 1, g_next_segment = 1;
// The sites (access instructions) of the running launch: g_site_pcs[site] is its pc offset;
// site 0, an instruction past kGMaxSites, names no line. A small direct-mapped cache in front.
std::vector<uint32_t> g_site_pcs;
std::unordered_map<uint32_t, uint32_t> g_site_of;
struct SiteSlot {
    uint32_t pc, site;
};
SiteSlot g_site_cache[256];
// The last interval handed to a block (shared shadows).
uint64_t g_interval = 0;
// A launch that touched more shadow than this gives its pages back at the end.
constexpr size_t kKeptShadowBytes = size_t(64) << 20;
constexpr size_t kSharedShadowWords = (1 << 20) / 4;

// Per word that a release stored to: the releases a load of it acquires.
std::unordered_map<uintptr_t, Clock> g_sync;

// Within a block (races.h): the last release stored to a word of global or shared memory, by
// warp `warp` of block `block`, covering that warp's epochs below `upto`.
struct LocalRelease {
    uint32_t block;
    uint16_t warp;
    uint16_t upto;
};
std::unordered_map<uintptr_t, LocalRelease> g_local_sync;

// A fence by thread t: a flag it sets later releases its warp's accesses up to then. The warp
// is the unit: lanes that fenced and met at a __syncwarp() before one lane sets the flag are
// covered, and so (a blind spot) are lanes that did not.
void local_fence(Thread& t) { t.chk->local_release = true; }

// Warp y acquires warp x's epochs below `upto` (the later of what it had and this).
void acquire_warp(Block& b, unsigned y, unsigned x, uint16_t upto) {
    if (b.warp_acquired.empty()) b.warp_acquired.assign(kWarpSize * kWarpSize, 0);
    uint16_t& a = b.warp_acquired[y * kWarpSize + x];
    if (!a || uint16_t(upto - a) < 0x8000) a = upto;
}

// A synchronising access of `word` by thread t: a store after a fence releases, a read acquires.
__attribute__((noinline)) void local_synchronise(Block& b, Thread& t, uintptr_t word, unsigned f) {
    bool write = f & kAccessWrite, reads = !write || (f & kAccessRmw);
    if (reads && !g_local_sync.empty()) {
        auto it = g_local_sync.find(word);
        unsigned y = t.linear / kWarpSize;
        if (it != g_local_sync.end() && it->second.block == uint32_t(b.linear) && it->second.warp != y)
            acquire_warp(b, y, it->second.warp, it->second.upto);
    }
    if (!write || !(t.chk->local_release || (f & kAccessRelease))) return;
    // The warp's accesses so far are released; a new warp epoch keeps its later ones out.
    Warp& wp = b.warps[t.linear / kWarpSize];
    g_local_sync[word] = LocalRelease{uint32_t(b.linear), uint16_t(t.linear / kWarpSize), uint16_t(wp.epoch + 1)};
    wp.epoch++;
    inline_segments_moved();
}

// Thread t of block b acquires clock c. What came back to b from its own releases, through
// other blocks (warp A releases a flag, another block waits for it and releases a second one,
// warp B waits for that), orders warp A's accesses before warp B's.
void acquire_clock(Block& b, Thread& t, const Clock& c) {
    b.acquired.join(c);
    uint32_t own = c.get(uint32_t(b.linear));
    if (!own) return;
    unsigned y = t.linear / kWarpSize;
    uint32_t& next = b.own_acquired[y];
    for (; next < b.own_releases.size() && b.own_releases[next].clock <= own; next++) {
        const Block::OwnRelease& r = b.own_releases[next];
        if (r.warp != y) acquire_warp(b, y, r.warp, r.upto);
    }
}

// Whether a release of a warp's epochs below `upto` (0: none) covers its warp epoch `epoch`
// (16-bit epochs that wrap).
inline bool covers(uint16_t upto, uint16_t epoch) { return upto && uint16_t(upto - 1 - epoch) < 0x8000; }

// Whether warp `cur`'s access now comes after warp `prev`'s access in warp epoch `epoch`,
// through a flag `cur` acquired from `prev`.
inline bool ordered_in_block(const Block& b, unsigned prev, unsigned cur, uint16_t epoch) {
    return !b.warp_acquired.empty() && covers(b.warp_acquired[cur * kWarpSize + prev], epoch);
}

unsigned thread_of(const Access& a) { return unsigned(a.who & kThreadMask) - 1; }
unsigned thread_of(const GlobalAccess& a) { return unsigned(a.meta & kGThreadMask) - 1; }

inline bool this_launch(const GlobalAccess& a) { return a.seg >= g_first_segment; }
inline const Segment& segment(const GlobalAccess& a) { return g_segments[a.seg - g_first_segment]; }
// A compact entry of this launch that hands the word over to its GlobalWord.
inline bool expanded(const GlobalAccess& c) { return !(c.meta & kGThreadMask); }

// Word i's last write this launch, or an entry that reads as none.
const GlobalAccess& last_write(size_t i) {
    static const GlobalAccess none{};
    const GlobalAccess& c = g_compact[i];
    if (!this_launch(c)) return none;
    if (expanded(c)) return g_global[i].write;
    return (c.meta & kGWrite) ? c : none;
}

// The running warp's segment: a new one when its block passed a barrier, a fence or a release,
// or the warp a collective, since it last took one (Block::race_state, Warp::epoch).
__attribute__((noinline)) uint32_t new_segment(const Block& b, Warp& wp) {
    wp.race_state = b.race_state;
    wp.race_epoch = wp.epoch;
    g_segments.push_back(Segment{uint32_t(b.linear), b.barrier_epoch, b.clock, wp.epoch});
    gpubook_check_tls.segments = reinterpret_cast<const gpubook_race_segment*>(g_segments.data());
    return wp.race_seg = g_first_segment + uint32_t(g_segments.size() - 1);
}
inline uint32_t current_segment(const Block& b, Warp& wp) {
    if (__builtin_expect(wp.race_state == b.race_state && wp.race_epoch == wp.epoch && wp.race_seg >= g_first_segment, 1))
        return wp.race_seg;
    return new_segment(b, wp);
}

__attribute__((noinline)) uint32_t new_site(uint32_t pc, SiteSlot& slot) {
    auto it = g_site_of.find(pc);
    uint32_t site = 0;
    if (it != g_site_of.end()) site = it->second;
    else if (g_site_pcs.size() <= kGMaxSites) {
        site = uint32_t(g_site_pcs.size());
        g_site_pcs.push_back(pc);
        g_site_of.emplace(pc, site);
    }
    slot = SiteSlot{pc, site};
    return site;
}
inline uint32_t site_of(uint32_t pc) {
    SiteSlot& slot = g_site_cache[(pc * 0x9E3779B1u) >> 24];
    return slot.pc == pc && slot.site ? slot.site : new_site(pc, slot);
}

// A global entry in the form a report reads (`pc`: the access's own, when it is the current one).
Access full(const GlobalAccess& a, uint32_t pc) {
    const Segment& s = segment(a);
    Access x{};
    x.block = s.block;
    x.epoch = s.epoch;
    x.clock = s.clock;
    x.pc = pc;
    x.warp_epoch = uint16_t(s.warp_epoch);
    x.who = uint16_t((a.meta & kGThreadMask) | ((a.meta & kGWrite) ? kWrite : 0) | ((a.meta & kGSync) ? kSync : 0) |
                     ((a.meta & kGVolatile) ? kVolatile : 0));
    x.bytes = uint8_t((a.meta >> kGBytesShift) & 0xf);
    return x;
}

// Whether the block of segment `prev`, another block, is unordered with the current access.
__attribute__((noinline)) bool unordered_across_blocks(const Segment& prev, const Block& b) {
    return b.acquired.get(prev.block) < prev.clock;
}

// Two accesses of global memory in different segments of this launch, the current one of
// block `b`: the tests that read the segments' table.
__attribute__((noinline)) bool conflicts_across_segments(const GlobalAccess& prev, const GlobalAccess& cur,
                                                         const Block& b) {
    const Segment& ps = segment(prev);
    const Segment& cs = segment(cur);
    if (ps.block != cs.block) return unordered_across_blocks(ps, b);
    if (ps.epoch != cs.epoch) return false; // a __syncthreads() between them
    unsigned a = thread_of(prev), c = thread_of(cur);
    if (a == c) return false;
    if (a / kWarpSize == c / kWarpSize) return ps.warp_epoch == cs.warp_epoch;
    return !ordered_in_block(b, a / kWarpSize, c / kWarpSize, uint16_t(ps.warp_epoch));
}

// Two volatile accesses of global memory in different segments: lanes of one warp of one block
// in one barrier interval and one warp epoch.
__attribute__((noinline)) bool volatile_lanes_unordered(const GlobalAccess& prev, const GlobalAccess& cur) {
    const Segment& ps = segment(prev);
    const Segment& cs = segment(cur);
    unsigned a = thread_of(prev), c = thread_of(cur);
    return ps.block == cs.block && ps.epoch == cs.epoch && a != c && a / kWarpSize == c / kWarpSize &&
           ps.warp_epoch == cs.warp_epoch;
}

// Two accesses of global memory, `cur` of block `b`. Inlined: it runs up to three times for
// every access (most return at the first tests, none of which reads a segment).
__attribute__((always_inline)) inline bool conflicts(const GlobalAccess& prev, const GlobalAccess& cur, const Block& b) {
    if (!this_launch(prev)) return false;
    uint32_t pm = prev.meta, cm = cur.meta;
    if (!((pm | cm) & kGWrite)) return false;
    if (!(pm & cm & (0xfu << kGBytesShift))) return false;
    if ((pm & kGSync) && (cm & kGSync)) {
        // Two volatile accesses race only between lanes of one warp with nothing between them.
        if (!(pm & cm & kGVolatile)) return false;
        if (prev.seg == cur.seg) return (pm & kGThreadMask) != (cm & kGThreadMask);
        return volatile_lanes_unordered(prev, cur);
    }
    // One segment: one warp with nothing between the two accesses.
    if (prev.seg == cur.seg) return (pm & kGThreadMask) != (cm & kGThreadMask);
    return conflicts_across_segments(prev, cur, b);
}

std::string element_name(const Block& b, uintptr_t a, bool shared) {
    if (shared) {
        if (const SharedVar* v = b.shared.find(a, 1))
            return format("element %zu of __shared__ '%s'", size_t(a - v->addr) / v->elem_size, v->name);
        return "shared memory";
    }
    if (const Buffer* buf = g_arena.find(a, 1)) {
        size_t es = buf->elem_size ? buf->elem_size : 4;
        return format("%s[%zu]", buf->label.c_str(), size_t(a - buf->addr) / es);
    }
    return "device memory";
}

// "writes it", "read data[3] atomically": what access x did to `what`.
std::string verb(const Access& x, bool past, const std::string& what = "it") {
    bool wr = x.who & kWrite, vol = x.who & kVolatile, sync = (x.who & kSync) && !vol;
    const char* v = wr ? (sync ? (past ? "updated" : "updates") : (past ? "wrote" : "writes")) : (past ? "read" : "reads");
    return format("%s %s%s", v, what.c_str(), sync ? " atomically" : vol ? " (volatile)" : "");
}

// The flag word through which the write `prev` was released, if any (the lowest such address,
// so the report is the same on every run): a release of its warp that covers its warp epoch
// (same block), or a clock published with its block's entry at or past its clock (another block).
uintptr_t released_through(const Block& b, const Access& prev) {
    uintptr_t best = 0;
    auto take = [&best](uintptr_t word) {
        if (!best || word < best) best = word;
    };
    if (prev.block == uint32_t(b.linear)) {
        for (const auto& [word, r] : g_local_sync)
            if (r.block == prev.block && r.warp == thread_of(prev) / kWarpSize && covers(r.upto, prev.warp_epoch))
                take(word);
    } else if (prev.clock) {
        for (const auto& [word, c] : g_sync)
            if (c.get(prev.block) >= prev.clock) take(word);
    }
    return best;
}

// What a race between a write and a later read tells about a flag hand-over, or "": the reader
// read no flag, read it before anyone set it, read the wrong one, or a flag that does not order
// the data.
// `read_flag`: the reader's last volatile read (c.flag_addr) was of another word than the data.
std::string handover_advice(const Block& b, const Access& prev, const ThreadChecks& c, bool read_flag) {
    if (!(prev.who & kWrite)) return "";
    uintptr_t released = released_through(b, prev);
    auto name = [&b](uintptr_t word) { return element_name(b, word, b.shared.contains(word)); };
    if (released && !read_flag)
        return format(" The writer released the data through a flag, %s, but this thread read the data before "
                      "waiting for it: wait until a volatile or atomic load sees the flag, then read the data.",
                      name(released).c_str());
    if (read_flag && !c.flag_set)
        return " This thread read a flag (the second note) before any other thread had set it, and went on: "
               "read the flag in a loop until it shows the value the writer sets, and only then read the data.";
    if (released && (c.flag_addr & ~uintptr_t(3)) != released) {
        std::string r = name(released), f = name(c.flag_addr);
        return format(" The writer released the data through %s, but the flag this thread waited for, %s (the "
                      "second note), does not carry that release: wait for %s itself, or have whoever sets %s "
                      "call __threadfence() after seeing %s and before setting it.",
                      r.c_str(), f.c_str(), r.c_str(), f.c_str(), r.c_str());
    }
    if (read_flag)
        return " This thread read a flag first (the second note says where), but the flag does not order the "
               "data: the writing warp must write the data, then call __threadfence() (__threadfence_block() "
               "within a block), and only then set the flag with a volatile or atomic store.";
    return "";
}

[[noreturn]] __attribute__((noinline, cold)) void report(Worker& w, const Access& prev, const Access& cur, uintptr_t addr, bool shared) {
    const Launch& l = *w.launch;
    const Block& b = *w.blk;
    unsigned me[3], other[3], other_block[3];
    linear_to_coords(thread_of(cur), l.block, me);
    linear_to_coords(thread_of(prev), l.block, other);
    linear_to_coords(prev.block, l.grid, other_block);
    std::string where = element_name(b, addr, shared);
    // A read of data another warp wrote: perhaps a flag hand-over gone wrong (handover_advice).
    const ThreadChecks& c = *w.current->chk;
    bool other_warp = prev.block != cur.block || thread_of(prev) / kWarpSize != thread_of(cur) / kWarpSize;
    bool read_flag = c.flag_addr && (c.flag_addr & ~uintptr_t(3)) != (addr & ~uintptr_t(3));
    std::string advice = other_warp && !(cur.who & kWrite) ? handover_advice(b, prev, c, read_flag) : "";
    bool after_flag = !advice.empty() && read_flag; // the advice refers to the flag's note
    Diagnostic d;
    d.cls = "race";
    if (prev.block != cur.block) {
        d.message = format("data race between blocks on %s: thread %s of this block %s, and thread %s of block "
                           "%s %s in the same launch, with nothing ordering the two. Blocks run in no fixed "
                           "order: use atomics, split the work into two kernel launches, or hand the data over "
                           "with a flag (the writer writes the data, calls __threadfence(), then sets the flag "
                           "with an atomic or volatile store; the reader waits until an atomic or volatile load "
                           "sees the flag, then reads the data).%s",
                           where.c_str(), coords(me).c_str(), verb(cur, false).c_str(), coords(other).c_str(),
                           coords(other_block).c_str(), verb(prev, true).c_str(), advice.c_str());
    } else {
        bool same_warp = thread_of(prev) / kWarpSize == thread_of(cur) / kWarpSize;
        bool volatiles = prev.who & cur.who & kVolatile;
        d.message = format("data race on %s %s: thread %s %s, and thread %s %s with %s, so the result depends "
                           "on which thread runs first.%s",
                           shared ? "shared memory," : "global memory,", where.c_str(), coords(me).c_str(),
                           verb(cur, false).c_str(), coords(other).c_str(), verb(prev, true).c_str(),
                           same_warp    ? "no __syncthreads() (or __syncwarp(): both are lanes of one warp) between "
                                          "the two accesses"
                           : !advice.empty() ? "nothing ordering the two accesses"
                                             : "no __syncthreads() between the two accesses",
                           volatiles ? " volatile makes each access go to memory but orders nothing between "
                                       "lanes, which do not run in lockstep since Volta: the old warp-synchronous "
                                       "idiom needs a __syncwarp() between its steps (or __shfl_down_sync)."
                           : same_warp ? " Lanes of one warp do not run in lockstep (since Volta): synchronise "
                                         "them explicitly."
                           : !advice.empty() ? advice.c_str()
                                             : " Put a __syncthreads() between the write and the accesses that "
                                               "depend on it.");
    }
    d.pc = l.module_base + cur.pc;
    set_location(d, b, w.current);
    Note n;
    n.what = format("the other access: thread %s of block %s %s here", coords(other).c_str(),
                    coords(other_block).c_str(), verb(prev, true, where).c_str());
    n.pc = l.module_base + prev.pc;
    n.has_location = true;
    std::memcpy(n.block, other_block, sizeof other_block);
    std::memcpy(n.thread, other, sizeof other);
    d.more.push_back(n);
    if (after_flag) {
        Note f;
        f.has_location = true;
        f.block[0] = b.view.block_idx.x, f.block[1] = b.view.block_idx.y, f.block[2] = b.view.block_idx.z;
        std::memcpy(f.thread, me, sizeof me);
        f.what = format("the flag: thread %s of block %s read %s (volatile) here, before it read the data; the "
                        "write above was not released to it through this flag",
                        coords(me).c_str(), coords(f.block).c_str(),
                        element_name(b, c.flag_addr, b.shared.contains(c.flag_addr)).c_str());
        f.pc = c.flag_pc;
        d.more.push_back(f);
    }
    fail_block(w, std::move(d));
}

// Acquire and release through a synchronising access of a global word.
__attribute__((noinline)) void synchronise(Block& b, Thread& t, uintptr_t word, unsigned f) {
    local_synchronise(b, t, word, f);
    bool write = f & kAccessWrite, reads = !write || (f & kAccessRmw);
    if (reads) {
        auto it = g_sync.find(word);
        if (it != g_sync.end()) acquire_clock(b, t, it->second);
    }
    if (!write) return;
    uint32_t released = t.chk->release_clock;
    if (f & kAccessRelease) { // an atomic with release order is a fence and a store
        released = t.chk->release_clock = b.clock;
        b.clock++;
        b.race_state++;
        inline_segments_moved();
    }
    if (!released) return; // a flag set without a fence before it publishes nothing
    // local_synchronise has just released the warp's epochs below its new one.
    unsigned y = t.linear / kWarpSize;
    b.own_releases.push_back(Block::OwnRelease{released, uint16_t(y), b.warps[y].epoch});
    Clock& c = g_sync[word];
    c.join(b.acquired);
    c.raise(uint32_t(b.linear), released);
}

} // namespace

uint32_t Clock::get(uint32_t block) const {
    auto it = std::lower_bound(entries.begin(), entries.end(), block,
                               [](const std::pair<uint32_t, uint32_t>& e, uint32_t k) { return e.first < k; });
    return it != entries.end() && it->first == block ? it->second : 0;
}

void Clock::raise(uint32_t block, uint32_t clock) {
    auto it = std::lower_bound(entries.begin(), entries.end(), block,
                               [](const std::pair<uint32_t, uint32_t>& e, uint32_t k) { return e.first < k; });
    if (it != entries.end() && it->first == block) it->second = std::max(it->second, clock);
    else entries.insert(it, {block, clock});
}

void Clock::join(const Clock& other) {
    if (other.entries.empty()) return;
    if (entries.empty()) {
        entries = other.entries;
        return;
    }
    std::vector<std::pair<uint32_t, uint32_t>> out;
    out.reserve(entries.size() + other.entries.size());
    size_t i = 0, j = 0;
    while (i < entries.size() || j < other.entries.size()) {
        if (j == other.entries.size() || (i < entries.size() && entries[i].first < other.entries[j].first)) {
            out.push_back(entries[i++]);
        } else if (i == entries.size() || other.entries[j].first < entries[i].first) {
            out.push_back(other.entries[j++]);
        } else {
            out.push_back({entries[i].first, std::max(entries[i].second, other.entries[j].second)});
            i++;
            j++;
        }
    }
    entries.swap(out);
}

namespace {
// madvise the global shadow's pages that hold words lo..hi (whole pages: the words around them
// on those pages are an earlier launch's, which read as untouched whatever the advice does).
void advise_shadow(size_t lo, size_t hi, int advice) {
    size_t ps = size_t(sysconf(_SC_PAGESIZE));
    auto advise = [&](const void* first, const void* end) {
        uintptr_t from = reinterpret_cast<uintptr_t>(first) & ~(ps - 1);
        madvise(reinterpret_cast<void*>(from), reinterpret_cast<uintptr_t>(end) - from, advice);
    };
    advise(g_global + lo, g_global + hi + 1);
    advise(g_compact + lo, g_compact + hi + 1);
}
} // namespace

void races_begin_launch(Launch&) {
    g_shared_refused = false;
    if (g_arena.bytes()) {
        bool covered = g_global_space.cover(g_arena.reach() + 4) && g_compact_space.cover(g_arena.reach() + 4);
        g_global = covered ? static_cast<GlobalWord*>(g_global_space.data()) : nullptr;
        g_compact = covered ? static_cast<GlobalAccess*>(g_compact_space.data()) : nullptr;
        g_global_words = covered ? std::min(g_global_space.covered(), g_compact_space.covered()) / 4 : 0;
    }
    // GPUBOOK_EMU_SEGMENT_LIMIT: a lower limit, for the test of the renumbering.
    static const uint32_t limit = [] {
        const char* v = std::getenv("GPUBOOK_EMU_SEGMENT_LIMIT");
        return v && std::atoi(v) > 0 ? uint32_t(std::atoi(v)) : 1u << 31;
    }();
    g_next_segment = g_first_segment + uint32_t(g_segments.size());
    if (g_next_segment > limit) {
        // Numbers run out after about two billion segments: zero every shadow page any launch
        // touched, so that numbering can start again at 1.
        if (g_global && g_ever_lo <= g_ever_hi) advise_shadow(g_ever_lo, g_ever_hi, MADV_DONTNEED);
        g_ever_lo = SIZE_MAX;
        g_ever_hi = 0;
        g_next_segment = 1;
    }
    g_first_segment = g_next_segment;
    g_segments.clear();
    g_site_pcs.assign(1, 0);
    g_site_of.clear();
    std::memset(g_site_cache, 0, sizeof g_site_cache);
    g_sync.clear();
}

void races_end_launch() {
    if (g_global && g_touched_lo <= g_touched_hi) {
        g_ever_lo = std::min(g_ever_lo, g_touched_lo);
        g_ever_hi = std::max(g_ever_hi, g_touched_hi);
    }
    if (g_global && g_touched_lo <= g_touched_hi &&
        (g_touched_hi - g_touched_lo + 1) * sizeof(GlobalWord) > kKeptShadowBytes) {
        // Let the kernel take the touched shadow pages back when it needs memory (MADV_FREE):
        // a big check-mode launch's shadow (6x the data) is not held against the machine, yet
        // a page the kernel has not taken is not faulted in and zeroed again by the next launch
        // (a 16M vector add: 7.4 s a launch with MADV_DONTNEED, 2.2 s). Taken or not, an entry
        // reads as no access: zeros, or an earlier launch's segment.
        advise_shadow(g_touched_lo, g_touched_hi, MADV_FREE);
    }
    g_touched_lo = SIZE_MAX;
    g_touched_hi = 0;
    g_sync.clear();
    g_local_sync.clear();
}

void races_begin_block(Block& b) {
    if (!b.shared_shadow) {
        b.shared_shadow = reserve(kSharedShadowWords * sizeof(SharedWord));
        g_shared_refused |= !b.shared_shadow;
    }
    b.shared_interval = b.shared_layout = ++g_interval;
    b.clock = 1;
    b.race_state++;
    inline_segments_moved();
    b.acquired.clear();
    b.warp_acquired.clear();
    b.own_releases.clear();
    std::fill(std::begin(b.own_acquired), std::end(b.own_acquired), 0u);
}

void races_barrier(Block& b) {
    b.shared_interval = ++g_interval;
    b.race_state++;
    inline_segments_moved();
}

void races_fence(Worker& w) {
    Block& b = *w.blk;
    w.current->chk->release_clock = b.clock;
    b.clock++;
    b.race_state++;
    inline_segments_moved();
    local_fence(*w.current);
}

void races_fence_block(Worker& w) { local_fence(*w.current); }

void races_touch(const Buffer& b) {
    if (!b.bytes) return;
    size_t lo = (b.addr - g_arena.base()) / 4, hi = (b.addr + b.bytes - 1 - g_arena.base()) / 4;
    g_touched_lo = std::min(g_touched_lo, lo);
    g_touched_hi = std::max(g_touched_hi, hi);
}

void races_acquire(Worker& w, uintptr_t addr) {
    local_synchronise(*w.blk, *w.current, addr & ~uintptr_t(3), 0);
    if (!g_arena.contains(addr)) return;
    auto it = g_sync.find(addr & ~uintptr_t(3));
    if (it != g_sync.end()) acquire_clock(*w.blk, *w.current, it->second);
}

std::string races_unchecked() {
    std::string what;
    if (g_arena.bytes() && !g_global && g_arena.reach())
        what = format("global-memory races (the worker could not reserve %zu MiB of address space for their shadow)",
                      (g_global_space.shadow_bytes(g_arena.reach() + 4) +
                       g_compact_space.shadow_bytes(g_arena.reach() + 4)) >> 20);
    if (g_shared_refused)
        what += std::string(what.empty() ? "" : "; ") +
                format("shared-memory races of some blocks (the worker could not reserve %zu MiB for their shadow)",
                       (kSharedShadowWords * sizeof(SharedWord)) >> 20);
    return what;
}

uint32_t races_last_writer(uintptr_t addr) {
    if (!g_global || !g_arena.contains(addr) || (addr - g_arena.base()) / 4 >= g_global_words) return UINT32_MAX;
    const GlobalAccess& last = last_write((addr - g_arena.base()) / 4);
    return this_launch(last) ? segment(last).block : UINT32_MAX;
}

bool races_write_writers(const Launch& l, const char* path) {
    if (!g_global) return false; // no shadow, no writers: the host says they are unknown
    FILE* f = std::fopen(path, "wb");
    if (!f) return false;
    bool good = true;
    std::vector<uint64_t> who;
    for (const BufferTally& t : l.counts.buffers) {
        if (!t.stores.requests && !t.atomics) continue;
        const Buffer* buf = g_arena.find(t.addr, 1);
        if (!buf || (buf->addr + buf->bytes - g_arena.base()) / 4 > g_global_words) continue;
        uint64_t es = buf->elem_size ? buf->elem_size : 4, n = buf->bytes / es;
        who.assign(n, 0);
        for (uint64_t e = 0; e < n; e++) {
            uintptr_t a = buf->addr + e * es;
            const GlobalAccess& w = last_write((a - g_arena.base()) / 4);
            if (this_launch(w) && ((w.meta >> (kGBytesShift + a % 4)) & 1))
                who[e] = uint64_t(segment(w).block) * l.threads_per_block + thread_of(w) + 1;
        }
        uint64_t head[3] = {uint64_t(buf->addr), es, n};
        good = good && std::fwrite(head, sizeof head, 1, f) == 1;
        good = good && (n == 0 || std::fwrite(who.data(), sizeof(uint64_t) * n, 1, f) == 1);
    }
    return std::fclose(f) == 0 && good;
}

namespace {

// The bytes of word `word_addr` that the access [addr, addr + n) covers (bit k: byte k), and
// where in the word it starts.
inline uint8_t bytes_of(uintptr_t word_addr, uintptr_t addr, size_t n, uintptr_t& at) {
    at = word_addr < addr ? addr : word_addr;
    uintptr_t end = addr + n < word_addr + 4 ? addr + n : word_addr + 4;
    return uint8_t(((1u << (end - at)) - 1) << (at - word_addr));
}

inline uint16_t who_of(const Thread& t, unsigned f) {
    // The flags' bits shifted into place (the static_asserts below): no branches on the hot path.
    return uint16_t((t.linear + 1) | (f & (kAccessWrite | kAccessSync)) << 13 | (f & kAccessVolatile) << 10);
}

// SharedAccess::pc_bytes without its bytes. A kernel's code lies within its .so's first 256 MiB;
// past that the report names no line.
inline uint32_t shared_pc_part(const Launch& l, uintptr_t pc) {
    uintptr_t offset = pc - l.module_base;
    return offset < (uintptr_t(1) << 28) ? uint32_t(offset) << 4 : 0;
}

// Two accesses of one interval of one block (shared memory).
__attribute__((always_inline)) inline bool conflicts_shared(const SharedAccess& prev, const SharedAccess& cur,
                                                            const Block& b) {
    if (!prev.who) return false;
    if (!((prev.who | cur.who) & kWrite)) return false;
    if (!(prev.pc_bytes & cur.pc_bytes & 0xf)) return false;
    unsigned a = unsigned(prev.who & kThreadMask) - 1, c = unsigned(cur.who & kThreadMask) - 1;
    if ((prev.who & kSync) && (cur.who & kSync)) // two volatile accesses: see conflicts()
        return (prev.who & cur.who & kVolatile) && a != c && a / kWarpSize == c / kWarpSize &&
               prev.warp_epoch == cur.warp_epoch;
    if (a == c) return false;
    if (a / kWarpSize == c / kWarpSize) return prev.warp_epoch == cur.warp_epoch;
    return !ordered_in_block(b, a / kWarpSize, c / kWarpSize, prev.warp_epoch);
}

[[noreturn]] __attribute__((noinline, cold)) void report_shared(Worker& w, const SharedAccess& prev,
                                                                const SharedAccess& cur, uintptr_t at) {
    const Block& b = *w.blk;
    auto full = [&b](const SharedAccess& x) {
        Access a{};
        a.block = uint32_t(b.linear);
        a.epoch = b.barrier_epoch;
        a.pc = x.pc_bytes >> 4;
        a.warp_epoch = x.warp_epoch;
        a.who = x.who;
        a.bytes = uint8_t(x.pc_bytes & 0xf);
        return a;
    };
    report(w, full(prev), full(cur), at, true);
}

// One word of shared memory, accessed by `cur` in interval `interval`.
__attribute__((always_inline)) inline void check_shared_word(Worker& w, SharedWord& s, const SharedAccess& cur,
                                                             uint64_t interval, bool write, uintptr_t at) {
    if (s.interval != interval) { // nothing since the last barrier: this access starts the word
        s.interval = interval;
        s.write = write ? cur : SharedAccess{};
        s.read1 = write ? SharedAccess{} : cur;
        s.read2 = SharedAccess{};
        return;
    }
    if (conflicts_shared(s.write, cur, w.blk[0])) report_shared(w, s.write, cur, at);
    if (write) {
        if (conflicts_shared(s.read1, cur, w.blk[0])) report_shared(w, s.read1, cur, at);
        if (conflicts_shared(s.read2, cur, w.blk[0])) report_shared(w, s.read2, cur, at);
        s.write = cur;
    } else if ((s.read1.who & kThreadMask) == (cur.who & kThreadMask)) {
        s.read1 = cur; // the same thread read it last: one entry keeps it
    } else {
        s.read2 = s.read1;
        s.read1 = cur;
    }
}

} // namespace

bool races_set_by_another(const Worker& w, uintptr_t addr) {
    const Block& b = *w.blk;
    unsigned me = w.current->linear;
    uintptr_t word = addr & ~uintptr_t(3);
    if (g_arena.contains(word)) {
        size_t i = (word - g_arena.base()) / 4;
        if (!g_global || i >= g_global_words) return true; // unknown
        const GlobalAccess& e = last_write(i);
        if (!this_launch(e) || !(e.meta & kGThreadMask)) return false;
        return segment(e).block != uint32_t(b.linear) || thread_of(e) != me;
    }
    auto* table = static_cast<const SharedWord*>(b.shared_shadow);
    size_t i = (word - b.shared.base()) / 4;
    if (!table || !b.shared.contains(word) || i >= kSharedShadowWords) return true;
    const SharedWord& s = table[i];
    // A write before the block's last barrier (the flag's first value) is not a setting.
    if (s.interval != b.shared_interval || !(s.write.who & kThreadMask)) return false;
    return unsigned(s.write.who & kThreadMask) - 1 != me;
}

void race_check_shared(Worker& w, uintptr_t addr, size_t n, unsigned f, uintptr_t pc) {
    Block& b = *w.blk;
    auto* table = static_cast<SharedWord*>(b.shared_shadow);
    if (!table) return;
    uintptr_t base = b.shared.base();
    const Thread& t = *w.current;
    bool write = f & kAccessWrite;
    SharedAccess cur;
    cur.who = who_of(t, f);
    cur.warp_epoch = b.warps[t.linear / kWarpSize].epoch;
    uint32_t pc_part = shared_pc_part(*w.launch, pc);
    uint64_t interval = b.shared_interval;
    if (f & kAccessSync) local_synchronise(b, *w.current, addr & ~uintptr_t(3), f);
    if (__builtin_expect(n == 4 && !(addr & 3), 1)) { // one whole word: the usual access
        size_t i = (addr - base) / 4;
        if (i >= kSharedShadowWords) return;
        cur.pc_bytes = pc_part | 0xf;
        check_shared_word(w, table[i], cur, interval, write, addr);
        return;
    }
    size_t first = (addr - base) / 4, last = (addr + n - 1 - base) / 4;
    if (last >= kSharedShadowWords) return;
    for (size_t i = first; i <= last; i++) {
        uintptr_t at;
        cur.pc_bytes = pc_part | bytes_of(base + i * 4, addr, n, at);
        check_shared_word(w, table[i], cur, interval, write, at);
    }
}

// Whether compact entry `c`, of this launch, stays compact with `cur` added (and updates it):
// both of one thread, and one entry still says what a later access must be checked against.
// As GlobalWord keeps only the last write and a thread's last read, so does `c`; a write drops
// the thread's earlier accesses when it covers their bytes (whoever is ordered after it is
// ordered after them); a read after the thread's write keeps the write when they are of one
// segment and the read's bytes were written.
__attribute__((always_inline)) inline bool one_thread(GlobalAccess& c, const GlobalAccess& cur, const Block& b,
                                                      bool write) {
    uint32_t cm = c.meta, m = cur.meta;
    if ((cm & kGThreadMask) != (m & kGThreadMask)) return false;
    if (c.seg != cur.seg && segment(c).block != uint32_t(b.linear)) return false;
    if (write) {
        if (!(cm & kGWrite) && (cm & ~m & kGBytesMask)) return false; // it read bytes it does not write
        c = cur;
        return true;
    }
    if (!(cm & kGWrite)) {
        c = cur; // its last read, as GlobalWord::read1 keeps one read a thread
        return true;
    }
    return c.seg == cur.seg && !(m & ~cm & kGBytesMask);
}

// Moves a word from its compact entry `c` to its full shadow `s`.
__attribute__((noinline)) GlobalWord& expand(GlobalAccess& c, GlobalWord& s) {
    bool written = c.meta & kGWrite;
    s.write = written ? c : GlobalAccess{};
    s.read1 = written ? GlobalAccess{} : c;
    s.read2 = GlobalAccess{};
    c.meta = 0; // this launch's segment, no thread: expanded
    return s;
}

void race_check_global(Worker& w, uintptr_t addr, size_t n, unsigned f, uintptr_t pc) {
    Block& b = *w.blk;
    Thread& t = *w.current;
    bool write = f & kAccessWrite;
    if ((f & kAccessSync)) synchronise(b, t, addr & ~uintptr_t(3), f);
    if (!g_global) return;
    uintptr_t base = g_arena.base(), off = addr - base;
    size_t first = off / 4, last = (off + n - 1) / 4; // in a buffer races_touch saw this launch
    GlobalAccess cur;
    cur.seg = current_segment(b, b.warps[t.linear / kWarpSize]);
    uint32_t offset = uint32_t(pc - w.launch->module_base);
    uint32_t meta = (t.linear + 1) | (f & (kAccessWrite | kAccessSync)) << 11 | (f & kAccessVolatile) << 12 |
                    site_of(offset) << kGSiteShift;
    auto word = [&](size_t i, uint32_t bytes, uintptr_t at) __attribute__((always_inline)) {
        cur.meta = meta | bytes << kGBytesShift;
        GlobalAccess& c = g_compact[i];
        if (!this_launch(c)) {
            c = cur; // the word's first access this launch
            return;
        }
        if (!expanded(c) && one_thread(c, cur, b, write)) return;
        GlobalWord& s = expanded(c) ? g_global[i] : expand(c, g_global[i]);
        auto fail = [&](const GlobalAccess& prev) {
            report(w, full(prev, g_site_pcs[prev.meta >> kGSiteShift]), full(cur, offset), at, false);
        };
        if (conflicts(s.write, cur, b)) fail(s.write);
        if (write) {
            if (conflicts(s.read1, cur, b)) fail(s.read1);
            if (conflicts(s.read2, cur, b)) fail(s.read2);
            s.write = cur;
        } else if (!this_launch(s.read1)) {
            s.read1 = cur; // the word's first read this launch (read2 is older still)
        } else if ((s.read1.meta & kGThreadMask) == (cur.meta & kGThreadMask) &&
                   (s.read1.seg == cur.seg || segment(s.read1).block == uint32_t(b.linear))) {
            s.read1 = cur; // the same thread read it last: one entry keeps it
        } else {
            s.read2 = s.read1;
            s.read1 = cur;
        }
    };
    // Most accesses stay inside one word (n <= 4): its bytes without a loop.
    if (__builtin_expect(first == last, 1)) return word(first, ((1u << n) - 1) << (off & 3), addr);
    for (size_t i = first; i <= last; i++) {
        uintptr_t at = addr;
        uint32_t bytes = bytes_of(base + i * 4, addr, n, at);
        word(i, bytes, at);
    }
}

} // namespace gpubook::rt
