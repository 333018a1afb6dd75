// Check mode's memory checks, on every load and store a kernel makes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

// What an access is (flags of check_access).
enum AccessFlags : unsigned {
    kAccessWrite = 1,   // a store (or the write half of an atomic)
    kAccessSync = 2,    // volatile or atomic: communication between threads, never a race with another
    kAccessAligned = 4, // the compiler assumed natural alignment (a GPU faults when it is not)
    kAccessRmw = 8,     // an atomic read-modify-write (counted as an atomic, not a load or store)
    kAccessRelease = 16, // an atomic with release order: a __threadfence() comes with it
    kAccessVolatile = 32 // a volatile load or store (kAccessSync, not an atomic): between lanes of
                         // one warp it orders nothing (the pre-Volta warp-synchronous idiom)
};

// `pc` is the kernel's instruction that made the access. Ends the block on a violation; may
// let other threads run (check mode interleaves them).
void check_access(uintptr_t addr, size_t n, unsigned flags, uintptr_t pc);

// An `engine` launch (emu-bench only): check mode with every access returning unchecked, so
// the benchmark can show what the engine (fibers, barriers, hook calls) costs by itself.
extern bool g_access_checks_off;

struct Worker;
struct Block;
// Ends the block with an `uninitialized_read` of [addr, addr+n) of device memory.
[[noreturn]] void report_unwritten(Worker& w, uintptr_t addr, size_t n, uintptr_t pc);
// An atomic that reads [addr, addr+n) (all but exchange and store): device memory the host left
// unwritten ends the block now; shared memory no thread of the block wrote is noted as a read is.
void check_atomic_read(uintptr_t addr, size_t n, uintptr_t pc);
// Ends block `b` with the first noted read of never-written shared memory (SharedMemory::
// unwritten_read): at a barrier, or when its last thread exited.
[[noreturn]] void report_unwritten_read(Worker& w, Block& b);

} // namespace gpubook::rt
