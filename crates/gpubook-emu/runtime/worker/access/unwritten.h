// Check mode's uninitialised-read detector, opt-in by the host.
//
// The host says which device bytes hold no data yet (`UNWRITTEN <addr> <bytes>`, e.g. after
// an alloc that was only poisoned) and which it filled (`WROTE <addr> <bytes>`). A bitmap
// with one bit per 4-byte word of the arena remembers "never written"; kernel stores clear
// it, and a check-mode load of a never-written word is an `uninitialized_read`. Without
// those commands nothing is tracked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

void unwritten_set(uintptr_t addr, size_t n);   // UNWRITTEN
void unwritten_clear(uintptr_t addr, size_t n); // WROTE, and every kernel store
bool unwritten_any(uintptr_t addr, size_t n);
// Check mode's access path: [off, off+n) of the arena, inside a live buffer. A load of a
// never-written word returns true; a store marks its words written.
bool unwritten_load_at(size_t off, size_t n);
void unwritten_store_at(size_t off, size_t n);
// Some buffer went untracked since the worker started: the bitmap's address space was refused
// (ShadowSpace), so its never-written reads are not reported.
bool unwritten_refused();
// A fast-mode launch stores without telling anyone: forget everything (no false reports).
void unwritten_forget_all();

} // namespace gpubook::rt
