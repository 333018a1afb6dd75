#include "unwritten.h"

#include "../arena.h"
#include "../shadow_space.h"

#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>

namespace gpubook::rt {

namespace {
ShadowSpace g_space(1, 32);
uint64_t* g_bits = nullptr; // one bit per 4-byte word of the arena, up to g_words; 1 = never written
size_t g_words = 0;         // past it no bit was ever set (unwritten_set covers first)
bool g_any = false;         // some bit may be set
bool g_refused = false;     // a buffer went untracked: its address space was refused
size_t g_lo = SIZE_MAX, g_hi = 0; // word range where bits were ever set

bool cover(size_t arena_bytes) {
    if (!g_arena.bytes()) return false;
    if (!g_space.cover(arena_bytes)) return false;
    g_bits = static_cast<uint64_t*>(g_space.data());
    g_words = g_space.covered() / 4;
    return true;
}

// Calls f(bitmap word, mask) for the bits of every 4-byte word that [off, off+n) of the arena
// touches: one call for an access of up to 256 bytes that does not cross a 64-bit bitmap word.
template <class F> inline void each_bits_at(size_t off, size_t n, F f) {
    size_t first = off / 4, last = (off + n - 1) / 4;
    if (__builtin_expect(last >= g_words, 0)) { // beyond the bitmap: no bit there was ever set
        if (first >= g_words) return;
        last = g_words - 1;
    }
    if (first == last) return f(g_bits[first / 64], uint64_t(1) << (first % 64)); // most accesses
    for (size_t i = first / 64; i <= last / 64; i++) {
        unsigned lo = i == first / 64 ? first % 64 : 0, hi = i == last / 64 ? last % 64 : 63;
        f(g_bits[i], (~uint64_t(0) >> (63 - hi)) & (~uint64_t(0) << lo));
    }
}

template <class F> void each_bits(uintptr_t addr, size_t n, F f) {
    if (n && g_arena.contains(addr)) each_bits_at(addr - g_arena.base(), n, f);
}
} // namespace

void unwritten_set(uintptr_t addr, size_t n) {
    // Only whole words: a word the range covers partly may hold someone else's data.
    uintptr_t a = (addr + 3) & ~uintptr_t(3), end = (addr + n) & ~uintptr_t(3);
    if (end <= a || !g_arena.contains(a) || !g_arena.contains(end - 1)) return;
    if (!cover(std::max(g_arena.reach(), size_t(end - g_arena.base())))) {
        g_refused = true;
        return;
    }
    each_bits(a, end - a, [](uint64_t& bits, uint64_t mask) { bits |= mask; });
    g_lo = std::min(g_lo, (a - g_arena.base()) / 4);
    g_hi = std::max(g_hi, (end - 1 - g_arena.base()) / 4);
    g_any = true;
}

void unwritten_clear(uintptr_t addr, size_t n) {
    if (!g_any) return;
    each_bits(addr, n, [](uint64_t& bits, uint64_t mask) { bits &= ~mask; });
}

bool unwritten_any(uintptr_t addr, size_t n) {
    if (!g_any) return false;
    uint64_t any = 0;
    each_bits(addr, n, [&](uint64_t& bits, uint64_t mask) { any |= bits & mask; });
    return any != 0;
}

bool unwritten_load_at(size_t off, size_t n) {
    if (!g_any) return false;
    uint64_t any = 0;
    each_bits_at(off, n, [&](uint64_t& bits, uint64_t mask) { any |= bits & mask; });
    return any != 0;
}

void unwritten_store_at(size_t off, size_t n) {
    if (g_any) each_bits_at(off, n, [](uint64_t& bits, uint64_t mask) { bits &= ~mask; });
}

bool unwritten_refused() { return g_refused; }

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
