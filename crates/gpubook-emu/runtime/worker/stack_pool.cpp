#include "stack_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>

namespace gpubook::rt {

namespace {
constexpr size_t kGuardBytes = 64 * 1024;
// Guard ranges, append-only, readable from a signal handler without locks.
constexpr size_t kMaxStacks = 1 << 16;
char* g_guards[kMaxStacks];
std::atomic<size_t> g_stack_count{0};
} // namespace

size_t stack_size() {
    static const size_t size = [] {
        const char* kb = std::getenv("GPUBOOK_EMU_STACK_KB");
        long v = kb ? std::atol(kb) : 0;
        return size_t(v >= 16 ? v : 128) * 1024;
    }();
    return size;
}

size_t stack_budget() {
    static const size_t budget = [] {
        size_t maps = 65530;
        if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
            unsigned long v = 0;
            if (std::fscanf(f, "%lu", &v) == 1 && v > 0) maps = v;
            std::fclose(f);
        }
        // Two mappings a stack, and room for everything else the worker maps (kernels, shadows).
        size_t n = maps > 8192 ? (maps - 8192) / 2 : 1024;
        if (const char* env = std::getenv("GPUBOOK_EMU_MAX_STACKS")) n = std::min(n, size_t(std::atol(env)));
        return std::min(n, kMaxStacks);
    }();
    return budget;
}

bool stack_allocate(Stack* out) {
    if (g_stack_count.load() >= stack_budget()) return false;
    size_t usable = stack_size();
    void* p = mmap(nullptr, kGuardBytes + usable, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    char* base = static_cast<char*>(p);
    if (mprotect(base, kGuardBytes, PROT_NONE) != 0) { // no guard, no stack
        munmap(p, kGuardBytes + usable);
        return false;
    }
    size_t i = g_stack_count.fetch_add(1);
    if (i < kMaxStacks) __atomic_store_n(&g_guards[i], base, __ATOMIC_RELEASE);
    *out = Stack{base, base + kGuardBytes + usable};
    return true;
}

bool stack_guard_contains(const void* addr) {
    auto a = static_cast<const char*>(addr);
    size_t n = g_stack_count.load();
    for (size_t i = 0; i < n && i < kMaxStacks; i++) {
        char* g = __atomic_load_n(&g_guards[i], __ATOMIC_ACQUIRE);
        if (g && a >= g && a < g + kGuardBytes) return true; // null: slot being filled
    }
    return false;
}

} // namespace gpubook::rt
