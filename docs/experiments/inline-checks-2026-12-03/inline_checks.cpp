// What check mode would cost if its checks were compiled into the kernel's own code, as a
// compiler pass that tells device memory from the rest would emit them, and a block ran as a
// loop over its threads (no fiber, no call into the worker): kernels/bench/vector_add.cu's
// vector_add_naive with, written out by hand, every check check mode makes on it today:
//   - bounds: the access lies in the buffer its pointer parameter points into (the pass looks
//     the buffer up once a launch, so an access compares against two numbers);
//   - never-written memory: one bit a 4-byte word (worker/access/unwritten.cpp's bitmap);
//   - races: the 24-byte shadow word of worker/access/races.cpp (last write, last two reads,
//     each a segment and a thread), with its tests for the common case inline and the rest
//     (accesses of other segments of this launch: other warps, blocks, barrier intervals) out
//     of line;
//   - access counts: every lane's address per access site of its warp, and at the warp's end the
//     warp-level requests, their distinct bytes and 32-byte sectors (worker/access/counts.cpp),
//     and per thread its loads and stores, for the smallest and largest. Lanes that come in
//     address order are counted as they come; others are sorted at the warp's end.
// It is the best such a pass could do on this kernel (the pass itself does not exist).
//
// Built with -DNO_RACES or -DNO_COUNTS it leaves that part out (run.sh: what each costs); with
// -DSHADOW8 the race shadow is 8 bytes a word for words one thread owns, not 24.
//
//   inline_checks N REPS   the native loop and the checked one in turns, REPS times each after a
//                          warm-up: their medians and the ratio
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <vector>

namespace {

constexpr unsigned kBlock = 256, kWarp = 32, kSites = 3;

// The arena: a, b and c one after another, as device buffers are.
struct Arena {
    char* base;
    size_t bytes;
};

// The race shadow: as races.cpp's GlobalWord.
struct Entry {
    uint32_t seg, meta;
};
struct Word {
    Entry write, read1, read2;
};
constexpr uint32_t kWrite = 1u << 11, kThreadMask = (1u << 11) - 1;
constexpr unsigned kSiteShift = 16, kBytesShift = 12;

struct Checks {
    Arena arena;
    uint64_t* unwritten; // 1 = never written, one bit a word
    Word* shadow;        // one a word
    uint32_t first_seg, next_seg;
    // Counts: per site, every lane's address in the running warp, and the launch's sums.
    uintptr_t lane_addr[kSites][kWarp];
    unsigned lane_mask[kSites];
    // While a warp's lanes come in address order (the usual case) a site's request is counted as
    // they come: the previous lane's address, and the distinct words and sectors so far.
    uintptr_t last_addr[kSites];
    unsigned run_words[kSites], run_sectors[kSites];
    bool in_order[kSites];
    uint64_t requests[kSites], bytes[kSites], unique_bytes[kSites], sectors[kSites];
    uint64_t min_loads = ~0ull, max_loads = 0, min_stores = ~0ull, max_stores = 0;
    uint64_t failures = 0;
};

void* reserve(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

// What check mode does on a report: out of line, never taken by a right kernel.
__attribute__((noinline, cold)) void report(Checks& c, const char*) { c.failures++; }

// Two accesses of different segments of this launch: the vector clocks and barrier epochs of
// races.cpp's conflicts_across_segments. Here every segment is a warp of a block with no
// barrier and no synchronisation, so two threads' accesses conflict.
__attribute__((noinline)) bool across_segments(const Entry& prev, const Entry& cur) {
    return (prev.meta & kThreadMask) != (cur.meta & kThreadMask) || prev.seg != cur.seg;
}

__attribute__((always_inline)) inline bool conflicts(const Checks& c, const Entry& prev, const Entry& cur) {
    if (prev.seg < c.first_seg) return false; // an earlier launch's
    if (!((prev.meta | cur.meta) & kWrite)) return false;
    if (prev.seg == cur.seg) return (prev.meta & kThreadMask) != (cur.meta & kThreadMask);
    return across_segments(prev, cur);
}

// One 4-byte access at p, in the buffer [lo, lo + bytes) its parameter points into.
template <unsigned Site, bool Write>
__attribute__((always_inline)) inline void check(Checks& c, const void* p, uintptr_t lo, uintptr_t bytes,
                                                 uint32_t seg, unsigned thread, unsigned lane, uint32_t& nloads,
                                                 uint32_t& nstores) {
    uintptr_t a = uintptr_t(p);
    if (a - lo > bytes - 4 || (a & 3)) report(c, "out of bounds or misaligned");
    size_t w = (a - uintptr_t(c.arena.base)) / 4;
    uint64_t bit = uint64_t(1) << (w % 64);
    if (Write) c.unwritten[w / 64] &= ~bit;
    else if (c.unwritten[w / 64] & bit) report(c, "never written");
#if defined(SHADOW8)
    // A compact shadow: one 8-byte entry a word, the last access, for words one thread owns
    // this launch; a second thread's access would move the word to a full entry (not written:
    // this kernel never shares a word).
    Entry& e = reinterpret_cast<Entry*>(c.shadow)[w];
    Entry cur{seg, (thread + 1) | (Write ? kWrite : 0) | 0xfu << kBytesShift | Site << kSiteShift};
    if (e.seg >= c.first_seg && (e.seg != cur.seg || (e.meta & kThreadMask) != (cur.meta & kThreadMask)))
        report(c, "shared word: a full entry");
    if (Write || !(e.meta & kWrite) || e.seg < c.first_seg) e = cur;
#elif !defined(NO_RACES)
    Word& s = c.shadow[w];
    Entry cur{seg, (thread + 1) | (Write ? kWrite : 0) | 0xfu << kBytesShift | Site << kSiteShift};
    if (conflicts(c, s.write, cur)) report(c, "race");
    if (Write) {
        if (conflicts(c, s.read1, cur) || conflicts(c, s.read2, cur)) report(c, "race");
        s.write = cur;
    } else if (s.read1.seg < c.first_seg || ((s.read1.meta & kThreadMask) == (cur.meta & kThreadMask) && s.read1.seg == cur.seg)) {
        s.read1 = cur;
    } else {
        s.read2 = s.read1;
        s.read1 = cur;
    }
#endif
#ifndef NO_COUNTS
    c.lane_addr[Site][lane] = a;
    c.lane_mask[Site] |= 1u << lane;
    uintptr_t last = c.last_addr[Site];
    c.in_order[Site] &= a >= last;
    c.run_words[Site] += a != last;
    c.run_sectors[Site] += a / 32 != last / 32;
    c.last_addr[Site] = a;
#endif
    (Write ? nstores : nloads)++;
}

// The warp's requests at each site: its lanes' addresses, sorted (they mostly are), give the
// distinct bytes and the distinct 32-byte sectors.
__attribute__((noinline)) void finish_warp(Checks& c) {
    for (unsigned s = 0; s < kSites; s++) {
        unsigned m = c.lane_mask[s];
        if (!m) continue;
        unsigned n = unsigned(__builtin_popcount(m)), words = c.run_words[s], sectors = c.run_sectors[s];
        if (!c.in_order[s]) { // lanes out of address order: sort their addresses
            uintptr_t v[kWarp];
            unsigned k = 0;
            for (unsigned l = 0; l < kWarp; l++)
                if (m >> l & 1) v[k++] = c.lane_addr[s][l];
            std::sort(v, v + n);
            words = sectors = 1;
            for (unsigned i = 1; i < n; i++) {
                words += v[i] != v[i - 1];
                sectors += v[i] / 32 != v[i - 1] / 32;
            }
        }
        c.last_addr[s] = 0;
        c.run_words[s] = c.run_sectors[s] = 0;
        c.in_order[s] = true;
        c.requests[s]++;
        c.bytes[s] += 4ull * n;
        c.unique_bytes[s] += 4ull * words;
        c.sectors[s] += sectors;
        c.lane_mask[s] = 0;
    }
}

void checked_vector_add(Checks& c, const float* a, const float* b, float* out, int n) {
    // Once a launch: the buffers the pointer parameters point into.
    uintptr_t a_lo = uintptr_t(a), b_lo = uintptr_t(b), c_lo = uintptr_t(out), bytes = uintptr_t(n) * 4;
    c.first_seg = c.next_seg;
    int blocks = (n + kBlock - 1) / kBlock;
    for (int block = 0; block < blocks; block++) {
        for (unsigned warp = 0; warp < kBlock / kWarp; warp++) {
            uint32_t seg = c.next_seg++;
            for (unsigned lane = 0; lane < kWarp; lane++) {
                unsigned t = warp * kWarp + lane;
                uint32_t nloads = 0, nstores = 0;
                int i = block * int(kBlock) + int(t);
                if (i < n) {
                    check<0, false>(c, &a[i], a_lo, bytes, seg, t, lane, nloads, nstores);
                    float x = a[i];
                    check<1, false>(c, &b[i], b_lo, bytes, seg, t, lane, nloads, nstores);
                    float y = b[i];
                    check<2, true>(c, &out[i], c_lo, bytes, seg, t, lane, nloads, nstores);
                    out[i] = x + y;
                }
                c.min_loads = std::min<uint64_t>(c.min_loads, nloads);
                c.max_loads = std::max<uint64_t>(c.max_loads, nloads);
                c.min_stores = std::min<uint64_t>(c.min_stores, nstores);
                c.max_stores = std::max<uint64_t>(c.max_stores, nstores);
            }
            finish_warp(c);
        }
    }
}

void native_vector_add(const float* a, const float* b, float* out, int n) {
    int blocks = (n + kBlock - 1) / kBlock;
    for (int block = 0; block < blocks; block++)
        for (unsigned t = 0; t < kBlock; t++) {
            int i = block * int(kBlock) + int(t);
            if (i < n) out[i] = a[i] + b[i];
        }
}

template <class F> double seconds(F f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1 << 24, reps = argc > 2 ? atoi(argv[2]) : 5;
    Checks c{};
    c.arena.bytes = size_t(n) * 4 * 3;
    c.arena.base = static_cast<char*>(reserve(c.arena.bytes));
    float* a = reinterpret_cast<float*>(c.arena.base);
    float* b = a + n;
    float* out = b + n;
    for (int i = 0; i < n; i++) a[i] = float(i), b[i] = 2.0f * float(i);
    size_t words = c.arena.bytes / 4;
    c.unwritten = static_cast<uint64_t*>(reserve((words + 63) / 64 * 8));
    for (size_t w = 2 * size_t(n); w < words; w++) c.unwritten[w / 64] |= uint64_t(1) << (w % 64); // out
    c.shadow = static_cast<Word*>(reserve(words * sizeof(Word)));
    c.next_seg = 1;
    for (unsigned s = 0; s < kSites; s++) c.in_order[s] = true;

    // Turns, after a warm-up of each: a machine that slows down for a while slows both.
    native_vector_add(a, b, out, n);
    checked_vector_add(c, a, b, out, n);
    std::vector<double> native_s, checked_s;
    for (int r = 0; r < reps; r++) {
        native_s.push_back(seconds([&] { native_vector_add(a, b, out, n); }));
        checked_s.push_back(seconds([&] { checked_vector_add(c, a, b, out, n); }));
    }
    double native = median(native_s), checked = median(checked_s);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += out[i];
    printf("vector_add %d: native 1 thread %.6f s, inline checks %.6f s: %.1fx native\n", n, native, checked,
           checked / native);
    printf("  checks: %llu failures; loads %llu bytes in %llu requests, %llu sectors (%.0f%% efficient); "
           "stores %llu requests, %llu sectors; loads a thread %llu..%llu; checksum %.6g\n",
           (unsigned long long)c.failures, (unsigned long long)(c.bytes[0] + c.bytes[1]),
           (unsigned long long)(c.requests[0] + c.requests[1]), (unsigned long long)(c.sectors[0] + c.sectors[1]),
           100.0 * double(c.unique_bytes[0] + c.unique_bytes[1]) / (32.0 * double(c.sectors[0] + c.sectors[1])),
           (unsigned long long)c.requests[2], (unsigned long long)c.sectors[2], (unsigned long long)c.min_loads,
           (unsigned long long)c.max_loads, sum);
    return c.failures != 0;
}
