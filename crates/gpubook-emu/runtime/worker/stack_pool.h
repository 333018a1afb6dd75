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
Stack stack_allocate();
// True when `addr` lies in the guard region of any stack this process allocated.
// Async-signal-safe.
bool stack_guard_contains(const void* addr);

} // namespace gpubook::rt
