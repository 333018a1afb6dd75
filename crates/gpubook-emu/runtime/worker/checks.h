// Bounds (and, in check mode, race) checking of one memory access by the running CUDA thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

// `pc` is the kernel's instruction that made the access. Ends the block on a violation.
void check_access(uintptr_t addr, size_t n, bool write, bool atomic, uintptr_t pc);

struct Worker;
// Ends the block with an `uninitialized_read` of [addr, addr+n).
[[noreturn]] void report_unwritten(Worker& w, uintptr_t addr, size_t n, uintptr_t pc);

} // namespace gpubook::rt
