// Address space for a shadow of device memory (check mode's race map and never-written bitmap).
//
// The whole arena's shadow is one reservation where the machine allows it (pages are only backed
// once touched). Under `ulimit -v`, strict overcommit (vm.overcommit_memory=2) or valgrind, a
// reservation that size is refused (the race maps are 8 bytes a byte: 512 GiB for a 64 GiB
// arena); then the shadow covers only as far as buffers reach, and grows (mremap keeps what it
// holds) when they reach further. Before, a refused reservation turned the check off silently.
#pragma once

#include <cstddef>

namespace gpubook::rt {

class ShadowSpace {
public:
    // `num` / `den` bytes of shadow per byte of the arena.
    ShadowSpace(size_t num, size_t den) : num_(num), den_(den) {}
    // Makes the shadow of the arena's first `arena_bytes` usable (zeroed where never written);
    // false when the address space cannot be had (the shadow keeps what it covered).
    bool cover(size_t arena_bytes);
    void* data() const { return data_; }
    size_t covered() const { return covered_; } // arena bytes the shadow covers
    size_t shadow_bytes(size_t arena_bytes) const;

private:
    size_t num_, den_;
    void* data_ = nullptr;
    size_t covered_ = 0, mapped_ = 0;
};

} // namespace gpubook::rt
