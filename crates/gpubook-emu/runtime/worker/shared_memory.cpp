#include "shared_memory.h"

#include "access/inline_checks.h"
#include "diagnostic.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace gpubook::rt {

namespace {
constexpr size_t kRedzone = 64;
// Room for the opt-in limit plus redzones; the limit is enforced separately.
constexpr size_t kCapacity = 1 << 20;
constexpr unsigned char kPoison = 0xff; // reads as NaN in floats, -1 in ints

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
} // namespace

void SharedMemory::init() {
    void* p = mmap(nullptr, kCapacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("gpubook-emu-worker: mmap of shared memory");
        std::abort();
    }
    base_ = reinterpret_cast<uintptr_t>(p);
    capacity_ = kCapacity;
}

void SharedMemory::begin_block(size_t dynamic_bytes) {
    for (int id : used_ids_) slots_[size_t(id)] = nullptr;
    used_ids_.clear();
    vars_.clear();
    recent_.clear();
    dynamic_declared_ = false;
    unwritten_reads_.clear();
    noted_reads_ = 0;
    std::fill(unwritten_.begin(), unwritten_.end(), 0);
    unwritten_bytes_ = 0;
    static_bytes_ = 0;
    // The dynamic region comes first, 128-byte aligned (CUDA guarantees at least 16).
    SharedVar dyn;
    dyn.addr = base_ + 128;
    dyn.bytes = dynamic_bytes;
    dyn.name = "extern __shared__";
    dyn.dynamic = true;
    std::memset(reinterpret_cast<void*>(dyn.addr), kPoison, dynamic_bytes);
    vars_.push_back(dyn);
    used_ = 128 + dynamic_bytes;
    mark_unwritten(dyn.addr, dynamic_bytes);
}

void SharedMemory::note_unwritten_read(const UnwrittenRead& r) {
    // A thread spinning on a flag nobody set reads it again and again: note it once. The first
    // few are enough to report.
    constexpr size_t kKept = 32;
    for (const UnwrittenRead& x : unwritten_reads_)
        if (x.addr == r.addr && x.thread == r.thread) return;
    if (unwritten_reads_.size() < kKept) unwritten_reads_.push_back(r);
    noted_reads_ = unwritten_reads_.size();
}

void SharedMemory::settle_reads(uintptr_t a, size_t n, uint32_t thread) {
    auto settled = [&](const UnwrittenRead& r) { return r.thread != thread && r.addr < a + n && a < r.addr + r.bytes; };
    unwritten_reads_.erase(std::remove_if(unwritten_reads_.begin(), unwritten_reads_.end(), settled), unwritten_reads_.end());
    noted_reads_ = unwritten_reads_.size();
}

void SharedMemory::mark_unwritten(uintptr_t a, size_t n) {
    size_t words = (a - base_ + n + 63) / 64;
    if (unwritten_.size() < words) {
        unwritten_.resize(words);
        inline_segments_moved(); // the inline checks' pointer to the bitmap with it
    }
    if (n) each_bits(unwritten_, a - base_, n, [this](uint64_t& bits, uint64_t mask) {
        unwritten_bytes_ += size_t(__builtin_popcountll(mask & ~bits));
        bits |= mask;
        return true;
    });
}

void* SharedMemory::variable(int id, const char* name, size_t bytes, size_t align, size_t elem,
                             std::string* error) {
    if (id >= 0 && size_t(id) < slots_.size() && slots_[size_t(id)]) return slots_[size_t(id)];
    if (id < 0) id = 0;
    size_t dynamic = vars_[0].bytes;
    // A launch with more than 48 KiB of dynamic shared memory opted in (the host checked the
    // device's limit); static __shared__ arrays never go past 48 KiB.
    size_t limit = dynamic > kSharedMemoryLimit ? kSharedMemoryOptInLimit : kSharedMemoryLimit;
    if (static_bytes_ + bytes + dynamic > limit || static_bytes_ + bytes > kSharedMemoryLimit) {
        *error = format("the block uses more shared memory than a GPU allows: __shared__ "
                        "variable '%s' (%zu bytes) brings it to %zu bytes of static and %zu bytes of "
                        "dynamic shared memory, over the %zu-byte limit (static __shared__ "
                        "variables: %zu bytes at most)",
                        name, bytes, static_bytes_ + bytes, dynamic, limit, kSharedMemoryLimit);
        return nullptr;
    }
    size_t offset = align_up(used_ + kRedzone, align > 16 ? align : 16);
    SharedVar v;
    v.addr = base_ + offset;
    v.bytes = bytes;
    v.elem_size = elem ? elem : 1;
    v.name = name;
    std::memset(reinterpret_cast<void*>(v.addr), kPoison, bytes);
    mark_unwritten(v.addr, bytes);
    vars_.push_back(v);
    used_ = offset + bytes;
    static_bytes_ += bytes;
    if (size_t(id) >= slots_.size()) slots_.resize(size_t(id) + 1, nullptr);
    slots_[size_t(id)] = reinterpret_cast<void*>(v.addr);
    used_ids_.push_back(id);
    return slots_[size_t(id)];
}

void* SharedMemory::dynamic_region(const char* name, size_t elem) {
    SharedVar& dyn = vars_[0];
    dynamic_declared_ = true;
    if (!dyn.elem_size || dyn.elem_size == 1) dyn.elem_size = elem ? elem : 1;
    if (std::strcmp(dyn.name, "extern __shared__") == 0 && name) dyn.name = name;
    return reinterpret_cast<void*>(dyn.addr);
}

const SharedVar* SharedMemory::find(uintptr_t a, size_t n) const {
    for (const SharedVar& v : vars_)
        if (a >= v.addr && a + n <= v.addr + v.bytes) return &v;
    return nullptr;
}

bool SharedMemory::holds_slow(uintptr_t a, size_t n) const {
    const SharedVar* v = find(a, n);
    if (!v) return false;
    recent_.add(v->addr, v->addr + v->bytes, v);
    return true;
}

const SharedVar* SharedMemory::nearest(uintptr_t a) const {
    const SharedVar* below = nullptr;
    const SharedVar* above = nullptr;
    for (const SharedVar& v : vars_) {
        if (v.dynamic && !dynamic_declared_) continue; // a kernel with no extern __shared__ ran past a variable
        if (v.addr <= a && (!below || v.addr > below->addr)) below = &v;
        if (v.addr > a && (!above || v.addr < above->addr)) above = &v;
    }
    if (below && above && a - (below->addr + below->bytes) > above->addr - a) return above;
    return below ? below : above;
}

} // namespace gpubook::rt
