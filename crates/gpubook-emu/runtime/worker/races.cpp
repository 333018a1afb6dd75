#include "races.h"

#include "arena.h"
#include "unwritten.h"
#include "worker.h"

#include <cstring>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

namespace gpubook::rt {

namespace {

constexpr uint16_t kWrite = 1u << 13, kAtomic = 1u << 14, kThreadMask = (1u << 13) - 1;

struct Access {
    uint32_t block;
    uint32_t epoch;
    uint16_t warp_epoch;
    uint16_t who; // thread + 1 (0: no access), | kWrite | kAtomic
    uint32_t pc;  // offset from the kernel's .so base
    // The bytes of the word accessed (bit k: byte k). Threads that store neighbouring bytes
    // (a u8 image, one pixel per thread) do not race: CUDA stores are byte-granular. Only the
    // last write is kept, so a read racing with an earlier write to other bytes of the word
    // can be missed.
    uint8_t bytes;
};
struct Word {
    Access write, read1, read2;
};

// Shadows are reserved address space (MAP_NORESERVE); only touched pages use memory.
Word* reserve(size_t words) {
    void* p = mmap(nullptr, words * sizeof(Word), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<Word*>(p);
}

Word* g_global = nullptr;   // one Word per 4 bytes of the arena
bool g_global_failed = false;
size_t g_touched_lo = SIZE_MAX, g_touched_hi = 0;
Word* g_shared = nullptr;   // one Word per 4 bytes of worker 0's shared memory
size_t g_shared_words_used = 0;
constexpr size_t kSharedShadowWords = (1 << 20) / 4;

// Loads of the running slice, with the bytes they saw (see races.h).
struct Pending {
    uintptr_t addr;
    size_t n;
    uintptr_t pc;
    bool shared;
    unsigned char seen[16];
};
std::vector<Pending> g_pending;
// A filter of the addresses already pending in this slice, so a loop that reads one address
// over and over (a spin-wait) adds it once. Entries of older slices are stale by generation.
struct Seen {
    uintptr_t addr;
    uint64_t slice;
};
constexpr size_t kSeenSlots = 4096;
Seen g_seen[kSeenSlots];
uint64_t g_slice = 1;
// A thread that reads more distinct words than this in one slice gets its snapshots compared
// early (writes after that point to words read before it can be missed).
constexpr size_t kMaxPending = size_t(1) << 20;

unsigned thread_of(const Access& a) { return unsigned(a.who & kThreadMask) - 1; }

bool conflicts(const Access& prev, const Access& cur, bool shared, bool fenced) {
    if (!prev.who) return false;
    if (!((prev.who | cur.who) & kWrite)) return false;
    if (!(prev.bytes & cur.bytes)) return false;
    if ((prev.who & kAtomic) && (cur.who & kAtomic)) return false;
    if (prev.block != cur.block) return !shared && !fenced;
    if (thread_of(prev) == thread_of(cur)) return false;
    if (prev.epoch != cur.epoch) return false;
    bool same_warp = thread_of(prev) / kWarpSize == thread_of(cur) / kWarpSize;
    return !(same_warp && prev.warp_epoch != cur.warp_epoch);
}

std::string element_name(Worker& w, uintptr_t a, bool shared) {
    if (shared) {
        if (const SharedVar* v = w.shared.find(a, 1))
            return format("element %zu of __shared__ '%s'", size_t(a - v->addr) / v->elem_size, v->name);
        return "shared memory";
    }
    if (const Buffer* b = g_arena.find(a, 1)) {
        size_t es = b->elem_size ? b->elem_size : 4;
        return format("%s[%zu]", b->label.c_str(), size_t(a - b->addr) / es);
    }
    return "device memory";
}

[[noreturn]] void report(Worker& w, const Access& prev, const Access& cur, uintptr_t addr, bool shared) {
    const Launch& l = *w.launch;
    auto verb = [](const Access& x, bool past) {
        bool wr = x.who & kWrite, at = x.who & kAtomic;
        if (at) return past ? "updated it atomically" : "updates it atomically";
        return wr ? (past ? "wrote" : "writes") : (past ? "read" : "reads");
    };
    unsigned me[3], other[3], other_block[3];
    linear_to_coords(thread_of(cur), l.block, me);
    linear_to_coords(thread_of(prev), l.block, other);
    linear_to_coords(prev.block, l.grid, other_block);
    std::string where = element_name(w, addr, shared);
    Diagnostic d;
    d.cls = "race";
    if (prev.block != cur.block) {
        d.message = format("data race between blocks on %s: thread %s of this block %s it, and thread %s of block "
                           "%s %s it in the same launch. Blocks run in no fixed order and cannot wait for each "
                           "other: use atomics, or split the work into two kernel launches.",
                           where.c_str(), coords(me).c_str(), verb(cur, false), coords(other).c_str(),
                           coords(other_block).c_str(), verb(prev, true));
    } else {
        bool same_warp = thread_of(prev) / kWarpSize == thread_of(cur) / kWarpSize;
        d.message = format("data race on %s %s: thread %s %s it, and thread %s %s it with no %s between the two "
                           "accesses, so the result depends on which thread runs first.%s",
                           shared ? "shared memory," : "global memory,", where.c_str(), coords(me).c_str(),
                           verb(cur, false), coords(other).c_str(), verb(prev, true),
                           same_warp ? "__syncthreads() (or __syncwarp(): both are lanes of one warp)"
                                     : "__syncthreads()",
                           same_warp ? " Lanes of one warp do not run in lockstep (since Volta): synchronise "
                                       "them explicitly."
                                     : " Put a __syncthreads() between the write and the accesses that "
                                       "depend on it.");
    }
    d.pc = l.module_base + cur.pc;
    set_location(d, w, w.current);
    Note n;
    n.what = format("the other access: thread %s of block %s %s %s here", coords(other).c_str(),
                    coords(other_block).c_str(), verb(prev, true), where.c_str());
    n.pc = l.module_base + prev.pc;
    n.has_location = true;
    std::memcpy(n.block, other_block, sizeof other_block);
    std::memcpy(n.thread, other, sizeof other);
    d.more.push_back(n);
    fail_block(w, std::move(d));
}

} // namespace

void races_begin_launch(Launch&) {
    if (!g_global && !g_global_failed && g_arena.bytes()) {
        g_global = reserve(g_arena.bytes() / 4 + 1);
        g_global_failed = g_global == nullptr; // no address space: global races go unchecked
    }
}

void races_end_launch() {
    if (g_global && g_touched_lo <= g_touched_hi) {
        // Give the touched shadow pages back: they read as zeros (no access) afterwards, and
        // a big check-mode launch does not keep its shadow (12x the data) resident.
        size_t ps = size_t(sysconf(_SC_PAGESIZE));
        uintptr_t from = reinterpret_cast<uintptr_t>(g_global + g_touched_lo) & ~(ps - 1);
        uintptr_t to = reinterpret_cast<uintptr_t>(g_global + g_touched_hi + 1);
        madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    }
    g_touched_lo = SIZE_MAX;
    g_touched_hi = 0;
    g_pending.clear();
}

void races_begin_block(Worker& w) {
    g_pending.clear();
    if (!g_shared) g_shared = reserve(kSharedShadowWords);
    if (g_shared) std::memset(g_shared, 0, g_shared_words_used * sizeof(Word));
    g_shared_words_used = 0;
    (void)w;
}

void race_check(Worker& w, uintptr_t addr, size_t n, bool write, bool atomic, uintptr_t pc, bool shared) {
    Word* table;
    size_t first, last;
    if (shared) {
        if (!g_shared) return;
        table = g_shared;
        first = (addr - w.shared.base()) / 4;
        last = (addr + n - 1 - w.shared.base()) / 4;
        if (last >= kSharedShadowWords) return;
        if (last + 1 > g_shared_words_used) g_shared_words_used = last + 1;
    } else {
        if (!g_global) return;
        table = g_global;
        first = (addr - g_arena.base()) / 4;
        last = (addr + n - 1 - g_arena.base()) / 4;
        if (first < g_touched_lo) g_touched_lo = first;
        if (last > g_touched_hi) g_touched_hi = last;
    }
    const Thread& t = *w.current;
    Access cur;
    cur.block = uint32_t(w.block_linear);
    cur.epoch = w.barrier_epoch;
    cur.warp_epoch = w.warps[t.linear / kWarpSize].epoch;
    cur.who = uint16_t((t.linear + 1) | (write ? kWrite : 0) | (atomic ? kAtomic : 0));
    cur.pc = uint32_t(pc - w.launch->module_base);
    bool fenced = w.launch->fenced.load(std::memory_order_relaxed);
    for (size_t i = first; i <= last; i++) {
        Word& s = table[i];
        uintptr_t word_addr = (shared ? w.shared.base() : g_arena.base()) + i * 4;
        uintptr_t at = word_addr < addr ? addr : word_addr;
        uintptr_t end = addr + n < word_addr + 4 ? addr + n : word_addr + 4;
        cur.bytes = uint8_t(((1u << (end - at)) - 1) << (at - word_addr));
        if (conflicts(s.write, cur, shared, fenced)) report(w, s.write, cur, at, shared);
        if (write) {
            if (conflicts(s.read1, cur, shared, fenced)) report(w, s.read1, cur, at, shared);
            if (conflicts(s.read2, cur, shared, fenced)) report(w, s.read2, cur, at, shared);
            s.write = cur;
        } else if (s.read1.who && s.read1.block == cur.block && thread_of(s.read1) == t.linear) {
            s.read1 = cur;
        } else {
            s.read2 = s.read1;
            s.read1 = cur;
        }
    }
    if (!write && !atomic) {
        Seen& seen = g_seen[(addr >> 2) % kSeenSlots];
        if (seen.addr == addr && seen.slice == g_slice) return;
        seen = Seen{addr, g_slice};
        if (g_pending.size() >= kMaxPending) races_end_slice(w);
        Pending p{addr, n < 16 ? n : 16, pc, shared, {}};
        std::memcpy(p.seen, reinterpret_cast<const void*>(addr), p.n);
        g_pending.push_back(p);
    }
}

void races_end_slice(Worker& w) {
    // race_check appends no pending entries for writes, so iterating by index is safe.
    for (size_t i = 0; i < g_pending.size(); i++) {
        const Pending p = g_pending[i];
        if (std::memcmp(p.seen, reinterpret_cast<const void*>(p.addr), p.n) != 0) {
            if (!p.shared) unwritten_clear(p.addr, p.n);
            race_check(w, p.addr, p.n, true, false, p.pc, p.shared);
        }
    }
    g_pending.clear();
    g_slice++;
}

void races_atomic_done(uintptr_t addr, size_t n) {
    for (Pending& p : g_pending)
        if (p.addr < addr + n && addr < p.addr + p.n) std::memcpy(p.seen, reinterpret_cast<const void*>(p.addr), p.n);
}

} // namespace gpubook::rt
