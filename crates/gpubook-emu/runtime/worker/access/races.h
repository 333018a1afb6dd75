// Check mode's race detector.
//
// A shadow table keeps, per 4-byte word of global and shared memory, the last write and the
// last two reads by different threads, each with its (block, barrier epoch, warp epoch, thread,
// block clock, pc): for global memory in 8 bytes, the first four through a segment (races.cpp);
// a shared-memory word keeps only (warp epoch, thread, pc) and the barrier interval it was
// touched in, since shared memory is one block's. Two accesses from different threads conflict when at least one is a write
// and they are not both synchronising (atomic or volatile; two volatile accesses by lanes of one
// warp with no warp collective between them do race: the pre-Volta warp-synchronous idiom), and
//   - same block: no __syncthreads() between them (same barrier epoch), and for lanes of one
//     warp also no warp collective/__syncwarp() between them; for two warps, unless the
//     earlier one released (a fence, then an atomic or volatile store of a flag) and the later
//     one acquired that flag in between. Per warp, not per lane: a fence starts a new warp
//     epoch, so lanes of the fencing warp are taken as ordered across it;
//   - different blocks (global memory): unless the earlier block released and the later one
//     acquired in between. A release is a __threadfence() (or an atomic with release order)
//     followed by an atomic or volatile store; an acquire is an atomic or volatile load that
//     reads such a store. Blocks keep vector clocks of the releases they acquired.
// Blocks run one after another in check mode (or interleaved when they wait for each other),
// so a race is found deterministically, at the access that completes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpubook::rt {

struct Worker;
struct Launch;
struct Buffer;
struct Block;

void races_begin_launch(Launch& l);
void races_end_launch();
void races_begin_block(Block& b);
// Every thread of `b` passed a __syncthreads(): its shared memory starts a new interval.
void races_barrier(Block& b);
// Record an access (flags: checks.h's AccessFlags); a conflicting one ends the block with a
// "race" diagnostic.
void race_check_global(Worker& w, uintptr_t addr, size_t n, unsigned flags, uintptr_t pc);
void race_check_shared(Worker& w, uintptr_t addr, size_t n, unsigned flags, uintptr_t pc);
// The launch accesses buffer `b` (once a launch, at least, before any access to it is checked):
// the shadow words it may touch, to give back or clear after the launch.
void races_touch(const Buffer& b);
// __threadfence() by the running thread: what its block did so far may be released (and what
// its warp did, to the block's other warps).
void races_fence(Worker& w);
// __threadfence_block(): what the running thread's warp did so far may be released to the
// block's other warps.
void races_fence_block(Worker& w);
// The running thread reads the global word at `addr` with a synchronising access (again): its
// block acquires what was released there.
void races_acquire(Worker& w, uintptr_t addr);
// Whether a thread other than the running one has written the word at `addr` in this launch
// (for shared memory: since the block's last barrier): a flag it reads has been set. True when
// the shadow cannot tell.
bool races_set_by_another(const Worker& w, uintptr_t addr);
// What this launch could not check for races, or "": global memory's shadow needs address
// space as large as 6x what the buffers reach, which `ulimit -v` or strict overcommit may refuse.
std::string races_unchecked();
// The block that last wrote the word at `addr` (global memory), or UINT32_MAX.
uint32_t races_last_writer(uintptr_t addr);
// Before races_end_launch: writes to `path` who wrote each element of the buffers the launch
// stored to (WRITERS command; DESIGN.md "Writers"). Per buffer: u64 address, u64 element
// size, u64 elements, then per element a u64: 0 for not written by this launch, else the
// writing thread's global linear id + 1 (block linear id x threads per block + thread linear
// id). An element is credited to the last write of its first 4-byte word, and only if that
// write covered the element's first byte. Returns false when the file could not be written.
bool races_write_writers(const Launch& l, const char* path);

} // namespace gpubook::rt
