// A block's shared memory: one region per worker OS thread, re-laid out for every block.
// Each __shared__ variable (and the dynamic `extern __shared__` region) gets a redzone
// before it, so an out-of-bounds access lands in no variable and the checker can say
// which variable it ran past. A bit per byte remembers which bytes no thread of the block has
// written yet (check mode's never-written reads: a GPU's shared memory starts every block with
// whatever the last one left there).
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

// A read of shared memory that no thread of the block had written (check mode). Reported at
// the block's next barrier or end, unless another thread writes those bytes first: then the read
// came too early (a missing __syncthreads(), which the race detector reports), not never.
struct UnwrittenRead {
    uintptr_t addr = 0;
    uintptr_t pc = 0;
    uint32_t bytes = 0;
    uint32_t thread = 0; // linear id in the block
    bool atomic = false;
};

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
    size_t capacity() const { return capacity_; }
    size_t used() const { return used_; }
    // The variable holding [a, a+n), else null.
    const SharedVar* find(uintptr_t a, size_t n) const;
    // Whether one variable holds [a, a+n): check mode asks on every access, so the two
    // variables it found last are tried first (a tiled kernel takes turns between two tiles).
    bool holds(uintptr_t a, size_t n) const { return recent_.holds(a, n) || holds_slow(a, n); }
    // The variable just below a (whose end a ran past), else the one just above.
    const SharedVar* nearest(uintptr_t a) const;
    size_t static_bytes() const { return static_bytes_; }
    // What check mode's inline checks read and keep (device/check_state.h): the count of bytes
    // laid out and never written, their bitmap (moved when a variable is laid out: the worker
    // refreshes the state then), and the count of noted reads.
    size_t* unwritten_bytes() { return &unwritten_bytes_; }
    uint64_t* unwritten_bits() { return unwritten_.data(); }
    const size_t* noted_reads() const { return &noted_reads_; }

    // Check mode, for [a, a+n) inside one variable: a store by `thread` makes its bytes written
    // and (unless it is an atomic's write, which read the same garbage) settles the noted reads
    // of them by other threads; a read of bytes of which none was written in this block is
    // noted. "None" rather than "any": a struct copied whole reads its padding, which no field
    // store wrote.
    // Once every laid-out byte is written (a tiled kernel's tiles, after their first fill),
    // neither needs the bitmap: one test.
    void note_store(uintptr_t a, size_t n, uint32_t thread, bool atomic) {
        if (unwritten_bytes_)
            each_bits(unwritten_, a - base_, n, [this](uint64_t& bits, uint64_t mask) {
                unwritten_bytes_ -= size_t(__builtin_popcountll(bits & mask));
                bits &= ~mask;
                return true;
            });
        if (__builtin_expect(!unwritten_reads_.empty(), 0) && !atomic) settle_reads(a, n, thread);
    }
    bool never_written(uintptr_t a, size_t n) const {
        if (__builtin_expect(!unwritten_bytes_, 1)) return false;
        return each_bits(unwritten_, a - base_, n, [](const uint64_t& bits, uint64_t mask) { return (bits & mask) == mask; });
    }
    void note_unwritten_read(const UnwrittenRead& r);
    // The first noted read still unsettled, else null. A barrier or the block's end reports it.
    const UnwrittenRead* unwritten_read() const { return unwritten_reads_.empty() ? nullptr : &unwritten_reads_[0]; }

private:
    uintptr_t base_ = 0;
    size_t capacity_ = 0;
    size_t used_ = 0;          // bytes of the region laid out so far, redzones included
    size_t static_bytes_ = 0;  // payload of __shared__ variables in this block
    std::vector<SharedVar> vars_;   // vars_[0] is the dynamic region
    bool dynamic_declared_ = false; // the block's kernel named it (extern __shared__)
    std::vector<void*> slots_;      // by rewrite id
    std::vector<int> used_ids_;
    mutable Recent<SharedVar, 2> recent_; // the variables holds() found last (vars_ may move: copies)
    std::vector<uint64_t> unwritten_; // bit i: byte base_ + i not written since it was laid out
    size_t unwritten_bytes_ = 0;      // bits set in unwritten_
    std::vector<UnwrittenRead> unwritten_reads_; // in the order they happened
    size_t noted_reads_ = 0;                      // unwritten_reads_.size()
    void settle_reads(uintptr_t a, size_t n, uint32_t thread);
    bool holds_slow(uintptr_t a, size_t n) const;
    void mark_unwritten(uintptr_t a, size_t n);
    // f(bitmap word, mask of the bits of [first, first+n) in it) for each word, while f returns true.
    template <class Words, class F> static bool each_bits(Words& words, size_t first, size_t n, F f) {
        size_t last = first + n - 1;
        if (__builtin_expect(first / 64 == last / 64, 1))
            return f(words[first / 64], (~uint64_t(0) >> (63 - last % 64)) & (~uint64_t(0) << first % 64));
        for (size_t i = first / 64; i <= last / 64; i++) {
            unsigned lo = i == first / 64 ? first % 64 : 0, hi = i == last / 64 ? last % 64 : 63;
            if (!f(words[i], (~uint64_t(0) >> (63 - hi)) & (~uint64_t(0) << lo))) return false;
        }
        return true;
    }
};

} // namespace gpubook::rt
