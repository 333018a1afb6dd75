// Native against checked, in turns: the 16M vector add (kernel.cpp), a block a loop, 256
// threads a block, one thread. Prints both medians, the ratio, and the checks' own counts.
#include "checks_inline.h"
#include "shim.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <vector>

dim3 threadIdx, blockIdx, blockDim, gridDim;
gpubook_checks g_chk;
uintptr_t gpubook_arena_lo, gpubook_arena_bytes;

void launch_native(unsigned, unsigned, const float*, const float*, float*, int);
void launch_checked(unsigned, unsigned, const float*, const float*, float*, int);

extern "C" {
void gpubook_slow_bounds(uintptr_t a, unsigned long n, unsigned site) {
    for (unsigned i = 0; i < g_chk.nbuffers; i++) {
        const gpubook_buffer& b = g_chk.buffers[i];
        if (a - b.lo <= b.bytes - n) {
            g_chk.sites[site].lo = b.lo;
            g_chk.sites[site].span = b.bytes;
            return;
        }
    }
    g_chk.slow++; // out of bounds
}
void gpubook_slow(const char*, uintptr_t) { g_chk.slow++; }
void gpubook_slow_race(uintptr_t, unsigned long, unsigned) { g_chk.slow++; }
void gpubook_yield() {
    g_chk.slice = 0;
    g_chk.yields++;
}
}

// The warp's requests at each site (as inline_checks-2026-12-03 and counts.cpp): lanes in
// address order were counted as they came; others are sorted.
void gpubook_finish_warp() {
    for (gpubook_site& s : g_chk.sites) {
        unsigned m = s.lane_mask;
        if (!m) continue;
        unsigned n = unsigned(__builtin_popcount(m)), words = s.run_words, sectors = s.run_sectors;
        if (!s.in_order) {
            uintptr_t v[32];
            unsigned k = 0;
            for (unsigned l = 0; l < 32; l++)
                if (m >> l & 1) v[k++] = s.lane_addr[l];
            std::sort(v, v + n);
            words = sectors = 1;
            for (unsigned i = 1; i < n; i++) {
                words += v[i] != v[i - 1];
                sectors += v[i] / 32 != v[i - 1] / 32;
            }
        }
        s.last_addr = 0;
        s.run_words = s.run_sectors = 0;
        s.in_order = true;
        s.requests++;
        s.bytes += 4ull * n;
        s.unique_bytes += 4ull * words;
        s.sectors += sectors;
        s.lane_mask = 0;
    }
}

namespace {
// kernels/bench/native.cpp's vector add on one thread: emu-bench's native column.
__attribute__((noinline)) void native_plain(const float* a, const float* b, float* c, int n) {
    for (int block = 0; block < (n + 255) / 256; block++)
        for (int t = 0; t < 256; t++) {
            int i = block * 256 + t;
            if (i < n) c[i] = a[i] + b[i];
        }
}
void* reserve(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
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
    const unsigned threads = 256, blocks = (unsigned(n) + threads - 1) / threads;
    size_t bytes = size_t(n) * 4, gap = 4096; // a guard gap after each buffer, as the arena's
    char* arena = static_cast<char*>(reserve(3 * (bytes + gap)));
    float* a = reinterpret_cast<float*>(arena);
    float* b = reinterpret_cast<float*>(arena + bytes + gap);
    float* out = reinterpret_cast<float*>(arena + 2 * (bytes + gap));
    for (int i = 0; i < n; i++) a[i] = float(i), b[i] = 2.0f * float(i);
    gpubook_checks& c = g_chk;
    c.arena = uintptr_t(arena);
    c.arena_bytes = 3 * (bytes + gap);
    gpubook_arena_lo = c.arena;
    gpubook_arena_bytes = c.arena_bytes;
    size_t words = c.arena_bytes / 4;
    c.unwritten = static_cast<uint64_t*>(reserve((words + 63) / 64 * 8));
    for (size_t w = size_t(out - a); w < words; w++) c.unwritten[w / 64] |= uint64_t(1) << (w % 64);
    c.compact = static_cast<gpubook_entry*>(reserve(words * sizeof(gpubook_entry)));
    c.buffers[0] = {uintptr_t(a), bytes};
    c.buffers[1] = {uintptr_t(b), bytes};
    c.buffers[2] = {uintptr_t(out), bytes};
    c.nbuffers = 3;
    for (gpubook_site& s : c.sites) s.in_order = true, s.span = 0, s.lo = ~uintptr_t(0) / 2;
    c.min_loads = c.min_stores = ~0u;
    auto checked = [&] {
        c.first_seg = c.seg + 1; // a launch: segments of earlier launches read as untouched
        launch_checked(blocks, threads, a, b, out, n);
    };
    launch_native(blocks, threads, a, b, out, n);
    checked();
    std::vector<double> native_s, loop_s, checked_s;
    for (int r = 0; r < reps; r++) {
        native_s.push_back(seconds([&] { native_plain(a, b, out, n); }));
        loop_s.push_back(seconds([&] { launch_native(blocks, threads, a, b, out, n); }));
        checked_s.push_back(seconds([&] { checked(); }));
    }
    bool right = true;
    for (int i = 0; i < n; i++) right &= out[i] == 3.0f * float(i);
    uint64_t req[2] = {}, sect[2] = {}, uniq[2] = {};
    for (const gpubook_site& s : c.sites) {
        bool store = &s == &c.sites[2]; // the pass numbers the kernel's accesses a, b, c
        req[store] += s.requests, sect[store] += s.sectors, uniq[store] += s.unique_bytes;
    }
    double nat = median(native_s), loop = median(loop_s), chk = median(checked_s);
    printf("vector_add %d: native 1 thread %.6f s; the kernel in a block loop, unchecked %.6f s (%.1fx), "
           "pass-inlined checks %.6f s: %.1fx native (%s)\n",
           n, nat, loop, loop / nat, chk, chk / nat, right ? "right" : "WRONG");
    printf("  slow paths %llu, yields %llu; loads %llu requests %llu sectors (%.0f%% efficient), stores %llu "
           "requests %llu sectors; loads a thread %u..%u, stores %u..%u\n",
           (unsigned long long)c.slow, (unsigned long long)c.yields, (unsigned long long)req[0],
           (unsigned long long)sect[0], 100.0 * double(uniq[0]) / (32.0 * double(sect[0])),
           (unsigned long long)req[1], (unsigned long long)sect[1], c.min_loads, c.max_loads, c.min_stores,
           c.max_stores);
    return right && c.slow == 0 ? 0 : 1;
}
