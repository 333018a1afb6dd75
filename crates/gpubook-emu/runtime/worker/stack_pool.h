// Fiber stacks: mmap'd, with a PROT_NONE guard region below each so an overflow faults
// (kernels are compiled with -fstack-clash-protection, so even a large local array touches
// the guard instead of jumping over it). The crash handler asks which guard a fault hit.
#pragma once

#include <cstddef>

namespace gpubook::rt {

struct Stack {
    char* lowest = nullptr; // start of the guard region
    char* top = nullptr;    // one past the highest usable byte
};

// The usable size of a new stack: GPUBOOK_EMU_STACK_KB, default 128 KiB.
size_t stack_size();
// A new stack, or false when the process may not have another: each costs two memory mappings
// (the guard and the stack), and Linux allows a process vm.max_map_count of them (65530 by
// default), which thousands of waiting blocks can reach. GPUBOOK_EMU_MAX_STACKS lowers the
// budget (tests).
bool stack_allocate(Stack* out);
// How many stacks a process may have.
size_t stack_budget();
// True when `addr` lies in the guard region of any stack this process allocated.
// Async-signal-safe.
bool stack_guard_contains(const void* addr);

} // namespace gpubook::rt
