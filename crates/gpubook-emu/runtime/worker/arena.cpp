#include "arena.h"

#include "diagnostic.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace gpubook::rt {

Arena g_arena;

namespace {
constexpr size_t kMaxFreedRemembered = 64;
uintptr_t page_size() {
    static const uintptr_t p = uintptr_t(sysconf(_SC_PAGESIZE));
    return p;
}
} // namespace

std::string Arena::map_from_environment() {
    const char* fd = std::getenv("GPUBOOK_ARENA_FD");
    const char* addr = std::getenv("GPUBOOK_ARENA_ADDR");
    const char* bytes = std::getenv("GPUBOOK_ARENA_BYTES");
    if (!fd || !addr || !bytes) return "";
    uintptr_t want = std::strtoull(addr, nullptr, 16);
    size_t n = std::strtoull(bytes, nullptr, 10);
    // PROT_NONE first; ALLOC opens the pages of each live buffer.
    void* p = mmap(reinterpret_cast<void*>(want), n, PROT_NONE, MAP_SHARED | MAP_FIXED_NOREPLACE,
                   std::atoi(fd), 0);
    if (p == MAP_FAILED) return format("cannot map the device arena at %#lx: %s", (unsigned long)want, strerror(errno));
    if (reinterpret_cast<uintptr_t>(p) != want) {
        munmap(p, n);
        return format("the kernel mapped the device arena elsewhere than %#lx", (unsigned long)want);
    }
    base_ = want;
    bytes_ = n;
    guard_pages_ = std::getenv("GPUBOOK_EMU_NO_GUARD_PAGES") == nullptr;
    if (!guard_pages_) mprotect(p, n, PROT_READ | PROT_WRITE);
    return "";
}

// Closes the pages of [from, to) (a buffer just freed) that no live buffer still uses. Only the
// first and last page can be shared with a neighbour: buffers never overlap.
void Arena::protect(uintptr_t from, uintptr_t to) {
    if (!guard_pages_ || to <= from) return;
    uintptr_t ps = page_size();
    uintptr_t first = from & ~(ps - 1), last = (to - 1) & ~(ps - 1);
    auto in_use = [&](uintptr_t page) {
        for (const Buffer& b : live_)
            if (b.addr < page + ps && b.addr + b.bytes > page) return true;
        return false;
    };
    if (last > first + ps) mprotect(reinterpret_cast<void*>(first + ps), last - first - ps, PROT_NONE);
    if (!in_use(first)) mprotect(reinterpret_cast<void*>(first), ps, PROT_NONE);
    if (last != first && !in_use(last)) mprotect(reinterpret_cast<void*>(last), ps, PROT_NONE);
}

std::string Arena::alloc(uintptr_t addr, size_t bytes, std::string label, size_t elem_size) {
    if (bytes_ && (!contains(addr) || (bytes && !contains(addr + bytes - 1))))
        return format("ALLOC %#lx+%zu is outside the arena", (unsigned long)addr, bytes);
    if (bytes_) reach_ = std::max(reach_, size_t(addr + bytes - base_));
    Buffer b{addr, bytes, elem_size, std::move(label)};
    auto at = std::lower_bound(live_.begin(), live_.end(), addr,
                               [](const Buffer& x, uintptr_t a) { return x.addr < a; });
    if (at != live_.end() && at->addr == addr && at->bytes == bytes) { // the host renamed it
        *at = std::move(b);
        return "";
    }
    live_.insert(at, std::move(b));
    if (guard_pages_ && bytes) {
        uintptr_t ps = page_size();
        uintptr_t from = addr & ~(ps - 1), to = (addr + bytes + ps - 1) & ~(ps - 1);
        mprotect(reinterpret_cast<void*>(from), to - from, PROT_READ | PROT_WRITE);
    }
    return "";
}

std::string Arena::free(uintptr_t addr) {
    auto at = std::find_if(live_.begin(), live_.end(), [&](const Buffer& b) { return b.addr == addr; });
    if (at == live_.end()) return format("FREE %#lx: no such buffer", (unsigned long)addr);
    Buffer gone = std::move(*at);
    live_.erase(at);
    protect(gone.addr, gone.addr + gone.bytes);
    freed_.push_back(std::move(gone));
    if (freed_.size() > kMaxFreedRemembered) freed_.erase(freed_.begin());
    return "";
}

const Buffer* Arena::find(uintptr_t a, size_t n) const {
    auto it = std::upper_bound(live_.begin(), live_.end(), a,
                               [](uintptr_t x, const Buffer& b) { return x < b.addr; });
    if (it == live_.begin()) return nullptr;
    --it;
    return a + n <= it->addr + it->bytes ? &*it : nullptr;
}

const Buffer* Arena::nearest(uintptr_t a) const {
    auto it = std::upper_bound(live_.begin(), live_.end(), a,
                               [](uintptr_t x, const Buffer& b) { return x < b.addr; });
    const Buffer* above = it == live_.end() ? nullptr : &*it;
    const Buffer* below = it == live_.begin() ? nullptr : &*(it - 1);
    if (below && above && a - (below->addr + below->bytes) > above->addr - a) return above;
    return below ? below : above;
}

const Buffer* Arena::freed_at(uintptr_t a) const {
    for (auto it = freed_.rbegin(); it != freed_.rend(); ++it)
        if (a >= it->addr && a < it->addr + it->bytes) return &*it;
    return nullptr;
}

std::string describe_element(const Buffer& b, uintptr_t a, size_t access_size) {
    size_t es = b.elem_size ? b.elem_size : (access_size ? access_size : 1);
    long long offset = (long long)(a - b.addr);
    long long index = offset >= 0 ? offset / (long long)es : -(((-offset) + (long long)es - 1) / (long long)es);
    size_t count = b.bytes / es;
    return format("%s[%lld] (buffer '%s' has %zu element%s of %zu bytes)", b.label.c_str(), index,
                  b.label.c_str(), count, count == 1 ? "" : "s", es);
}

} // namespace gpubook::rt
