#include "unwritten.h"

#include "../arena.h"

#include <sys/mman.h>
#include <unistd.h>

namespace gpubook::rt {

namespace {
uint64_t* g_bits = nullptr; // one bit per 4-byte word of the arena; 1 = never written
bool g_any = false;         // some bit may be set
size_t g_lo = SIZE_MAX, g_hi = 0; // word range where bits were ever set

bool reserve() {
    if (g_bits) return true;
    if (!g_arena.bytes()) return false;
    void* p = mmap(nullptr, g_arena.bytes() / 32 + 8, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    g_bits = static_cast<uint64_t*>(p);
    return true;
}

// Calls f(word) for every 4-byte word that [addr, addr+n) touches.
template <class F> void each_word(uintptr_t addr, size_t n, F f) {
    if (!n || !g_arena.contains(addr)) return;
    size_t first = (addr - g_arena.base()) / 4, last = (addr + n - 1 - g_arena.base()) / 4;
    for (size_t w = first; w <= last; w++) f(w);
}
} // namespace

void unwritten_set(uintptr_t addr, size_t n) {
    if (!reserve()) return;
    // Only whole words: a word the range covers partly may hold someone else's data.
    uintptr_t a = (addr + 3) & ~uintptr_t(3), end = (addr + n) & ~uintptr_t(3);
    if (end <= a) return;
    each_word(a, end - a, [](size_t w) {
        g_bits[w / 64] |= uint64_t(1) << (w % 64);
        if (w < g_lo) g_lo = w;
        if (w > g_hi) g_hi = w;
    });
    g_any = true;
}

void unwritten_clear(uintptr_t addr, size_t n) {
    if (!g_any) return;
    each_word(addr, n, [](size_t w) { g_bits[w / 64] &= ~(uint64_t(1) << (w % 64)); });
}

bool unwritten_any(uintptr_t addr, size_t n) {
    if (!g_any) return false;
    bool any = false;
    each_word(addr, n, [&](size_t w) { any |= (g_bits[w / 64] >> (w % 64)) & 1; });
    return any;
}

void unwritten_forget_all() {
    if (!g_any) return;
    size_t ps = size_t(sysconf(_SC_PAGESIZE));
    uintptr_t from = reinterpret_cast<uintptr_t>(g_bits + g_lo / 64) & ~(ps - 1);
    uintptr_t to = reinterpret_cast<uintptr_t>(g_bits + g_hi / 64 + 1);
    madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED); // reads back as zeros
    g_any = false;
    g_lo = SIZE_MAX;
    g_hi = 0;
}

} // namespace gpubook::rt
