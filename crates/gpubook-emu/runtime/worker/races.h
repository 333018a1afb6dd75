// Check mode's race detector.
//
// A shadow table keeps, per 4-byte word of global and shared memory, the last write and
// the last two reads by different threads, each with its (block, barrier epoch, warp
// epoch, thread, pc). Two accesses from different threads conflict when at least one is a
// write and they are not both atomic, and
//   - same block: no __syncthreads() between them (same barrier epoch), and for lanes of
//     one warp also no warp collective/__syncwarp() between them;
//   - different blocks (global memory): always, since blocks cannot order themselves.
// Blocks run one after another in check mode, so a race is found deterministically, at the
// access that completes it.
//
// Writes the instrumentation does not show: g++'s ASan pass checks each address once per
// basic block, so in `x += 1` (load x, store x) only the load reaches a hook. We therefore
// snapshot the bytes of every load and, when the thread parks or exits (the end of its
// "slice": no other thread ran meanwhile), compare: changed bytes mean the thread wrote them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

struct Worker;
struct Launch;

void races_begin_launch(Launch& l);
void races_end_launch();
void races_begin_block(Worker& w);
// Record an access; a conflicting one ends the block with a "race" diagnostic.
void race_check(Worker& w, uintptr_t addr, size_t n, bool write, bool atomic, uintptr_t pc, bool shared);
// The running thread is about to park or exit: record the writes its loads' snapshots reveal.
void races_end_slice(Worker& w);
// An atomic changed [addr, addr+n): not a plain write, so refresh the snapshots covering it.
void races_atomic_done(uintptr_t addr, size_t n);

} // namespace gpubook::rt
