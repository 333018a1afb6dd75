#include "stack_pool.h"

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

Stack stack_allocate() {
    size_t usable = stack_size();
    void* p = mmap(nullptr, kGuardBytes + usable, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("gpubook-emu-worker: mmap of a fiber stack");
        std::abort();
    }
    char* base = static_cast<char*>(p);
    mprotect(base, kGuardBytes, PROT_NONE);
    size_t i = g_stack_count.fetch_add(1);
    if (i < kMaxStacks) __atomic_store_n(&g_guards[i], base, __ATOMIC_RELEASE);
    return Stack{base, base + kGuardBytes + usable};
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
