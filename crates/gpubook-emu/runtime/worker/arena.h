// Emulated device memory as the worker sees it: the host's memfd mapped at the same
// address, and the table of live buffers (ALLOC/FREE) that bounds checks and messages use.
//
// Pages that hold no live buffer are kept PROT_NONE in the worker, so even fast mode
// (no instrumentation) faults on a wild access instead of silently corrupting memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubook::rt {

struct Buffer {
    uintptr_t addr = 0;
    size_t bytes = 0;
    size_t elem_size = 0; // 0: unknown, messages use the access size
    std::string label;
};

class Arena {
public:
    // Maps the arena from GPUBOOK_ARENA_FD/ADDR/BYTES. Without them (tests of the
    // worker alone) there is no device memory. Returns an error message or "".
    std::string map_from_environment();
    bool contains(uintptr_t a) const { return a - base_ < bytes_; }
    uintptr_t base() const { return base_; }
    size_t bytes() const { return bytes_; }
    // How far into the arena any buffer allocated so far reaches, in bytes from base().
    size_t reach() const { return reach_; }

    std::string alloc(uintptr_t addr, size_t bytes, std::string label, size_t elem_size);
    std::string free(uintptr_t addr);
    // The live buffer holding [a, a+n), else null.
    const Buffer* find(uintptr_t a, size_t n) const;
    // The live buffer nearest to a (for "past the end of ..." messages), else null.
    const Buffer* nearest(uintptr_t a) const;
    // A freed buffer that held a, else null (for "used after cudaFree" messages).
    const Buffer* freed_at(uintptr_t a) const;

private:
    void protect(uintptr_t from, uintptr_t to);
    uintptr_t base_ = 0;
    size_t bytes_ = 0;
    size_t reach_ = 0;
    bool guard_pages_ = false;
    std::vector<Buffer> live_;  // sorted by address
    std::vector<Buffer> freed_; // the most recent frees
};

extern Arena g_arena;

// Describes the element of `b` at address a, e.g. "c[1000]" and the buffer's extent.
std::string describe_element(const Buffer& b, uintptr_t a, size_t access_size);
// How far `a` lies outside buffer b: bytes before its start or past its end (0 inside).
// Async-signal-safe (the crash handler uses it).
inline uintptr_t distance_outside(const Buffer& b, uintptr_t a) {
    return a < b.addr ? b.addr - a : a >= b.addr + b.bytes ? a - (b.addr + b.bytes) : 0;
}

} // namespace gpubook::rt
