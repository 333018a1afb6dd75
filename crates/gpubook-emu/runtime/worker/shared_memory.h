// A block's shared memory: one region per worker OS thread, re-laid out for every block.
// Each __shared__ variable (and the dynamic `extern __shared__` region) gets a redzone
// before it, so an out-of-bounds access lands in no variable and the checker can say
// which variable it ran past.
#pragma once

#include "recent.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubook::rt {

// A GPU without opt-in allows 48 KiB of static + dynamic shared memory per block.
constexpr size_t kSharedMemoryLimit = 48 * 1024;
// Past it only dynamic shared memory, after the kernel opted in (cudaFuncSetAttribute), which
// the host checks against the device's limit; this is the most any GPU gives (an H200's 227 KiB).
constexpr size_t kSharedMemoryOptInLimit = 227 * 1024;

struct SharedVar {
    uintptr_t addr = 0;
    size_t bytes = 0;
    size_t elem_size = 1;
    const char* name = "";
    bool dynamic = false;
};

class SharedMemory {
public:
    void init();
    // A new block: no variables yet; the dynamic region holds `dynamic_bytes`.
    void begin_block(size_t dynamic_bytes);
    // The variable with rewrite id `id`, allocated (and poisoned) on first use in the block.
    // Returns null with *error set when the block would exceed kSharedMemoryLimit.
    void* variable(int id, const char* name, size_t bytes, size_t align, size_t elem, std::string* error);
    void* dynamic_region(const char* name, size_t elem);

    bool contains(uintptr_t a) const { return a - base_ < capacity_; }
    uintptr_t base() const { return base_; }
    size_t used() const { return used_; }
    // The variable holding [a, a+n), else null.
    const SharedVar* find(uintptr_t a, size_t n) const;
    // Whether one variable holds [a, a+n): check mode asks on every access, so the two
    // variables it found last are tried first (a tiled kernel takes turns between two tiles).
    bool holds(uintptr_t a, size_t n) const { return recent_.holds(a, n) || holds_slow(a, n); }
    // The variable just below a (whose end a ran past), else the one just above.
    const SharedVar* nearest(uintptr_t a) const;
    size_t static_bytes() const { return static_bytes_; }

private:
    uintptr_t base_ = 0;
    size_t capacity_ = 0;
    size_t used_ = 0;          // bytes of the region laid out so far, redzones included
    size_t static_bytes_ = 0;  // payload of __shared__ variables in this block
    std::vector<SharedVar> vars_;   // vars_[0] is the dynamic region
    std::vector<void*> slots_;      // by rewrite id
    std::vector<int> used_ids_;
    mutable Recent<SharedVar, 2> recent_; // the variables holds() found last (vars_ may move: copies)
    bool holds_slow(uintptr_t a, size_t n) const;
};

} // namespace gpubook::rt
