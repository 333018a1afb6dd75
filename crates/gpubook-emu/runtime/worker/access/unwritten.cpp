#include "unwritten.h"

#include "../arena.h"

#include <algorithm>
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

// Calls f(bitmap word, mask) for the bits of every 4-byte word that [addr, addr+n) touches:
// one call for an access of up to 256 bytes that does not cross a 64-bit bitmap word.
template <class F> void each_bits(uintptr_t addr, size_t n, F f) {
    if (!n || !g_arena.contains(addr)) return;
    size_t first = (addr - g_arena.base()) / 4, last = (addr + n - 1 - g_arena.base()) / 4;
    if (first == last) return f(g_bits[first / 64], uint64_t(1) << (first % 64)); // most accesses
    for (size_t i = first / 64; i <= last / 64; i++) {
        unsigned lo = i == first / 64 ? first % 64 : 0, hi = i == last / 64 ? last % 64 : 63;
        f(g_bits[i], (~uint64_t(0) >> (63 - hi)) & (~uint64_t(0) << lo));
    }
}
} // namespace

void unwritten_set(uintptr_t addr, size_t n) {
    if (!reserve()) return;
    // Only whole words: a word the range covers partly may hold someone else's data.
    uintptr_t a = (addr + 3) & ~uintptr_t(3), end = (addr + n) & ~uintptr_t(3);
    if (end <= a || !g_arena.contains(a)) return;
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
