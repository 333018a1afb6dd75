// Check mode's access counts: global and shared memory traffic as a GPU's memory system would
// see it, for graders and the memory-performance chapter.
//
// A GPU executes a memory instruction for a warp at once: the lanes' addresses form one
// warp-level request, which the memory system serves in 32-byte sectors (global memory) or in
// wavefronts of one 4-byte word per bank, 32 banks (shared memory). The emulator runs the lanes
// of a warp one after another, so it rebuilds the requests: lanes of one warp executing the same
// access instruction (same pc) for the same time (the n-th execution of that pc by each lane)
// belong to one request. DESIGN.md ("Access counts") says where this differs from a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubook::rt {

class Json;
struct Buffer;
struct Block;
struct Thread;
struct Launch;

// Global-memory requests of one kind (loads or stores).
struct GlobalTally {
    uint64_t requests = 0; // warp-level requests
    uint64_t bytes = 0;        // bytes the lanes asked for
    uint64_t unique_bytes = 0; // of those, distinct (a byte several lanes read counts once)
    uint64_t sectors = 0;      // distinct 32-byte sectors the requests touched
};

// Shared-memory requests of one kind.
struct SharedTally {
    uint64_t requests = 0;
    uint64_t bytes = 0;
    uint64_t wavefronts = 0;       // passes through the 32 banks, conflicts included
    uint64_t ideal_wavefronts = 0; // the fewest the same bytes could take (1 for 32 words)
};

// One thread's accesses (thread-level, not warp-level).
struct ThreadCounts {
    uint64_t global_loads = 0, global_stores = 0, shared_loads = 0, shared_stores = 0, atomics = 0, barriers = 0;
};

struct BufferTally {
    uintptr_t addr = 0;
    std::string label;
    GlobalTally loads, stores;
    uint64_t atomics = 0;
};

struct LaunchCounts {
    GlobalTally global_loads, global_stores;
    SharedTally shared_loads, shared_stores;
    uint64_t global_atomics = 0, shared_atomics = 0;
    uint64_t threads = 0;     // CUDA threads that ran to the end
    ThreadCounts per_thread_max;
    ThreadCounts per_thread_min;
    std::vector<BufferTally> buffers;
};

// A warp-level request being assembled from its lanes.
struct Request {
    Request() {} // the lane arrays stay uninitialised: only joined lanes are read
    uint32_t occurrence = 0;
    uint32_t lanes = 0;     // lanes that have joined
    uint32_t size = 0;      // bytes per lane
    bool write = false, shared = false;
    bool in_line = false;   // global: each lane joined at line + lane x size, in the first lane's buffer
    uintptr_t line = 0;
    const Buffer* line_buffer = nullptr;
    uintptr_t addr[32];
    const Buffer* buffer[32];
};

// One access instruction (pc, space) of one warp: per lane, how often it ran it; the requests
// some lane has started and not every lane has joined.
struct Site {
    uintptr_t key = 0; // pc, with bit 0 set for shared memory
    unsigned warp = 0;
    uint32_t occurrences[32]; // lane L's next execution is max(occurrences[L], floor)
    uint32_t floor = 0;       // where the lanes last met (counts_converged): none runs behind it
    uint32_t retired = 0; // occurrences below this are finished
    uint32_t newest = 0;  // occurrences below this have a request (lanes that skipped one leave it empty)
    // Occurrence o (retired <= o < newest) is assembled in ring[o & (ring.size() - 1)]; the size
    // is a power of two, grown when lanes run further apart.
    Request* ring_data = nullptr; // ring.data()
    uint32_t ring_mask = 0; // ring.size() - 1, kept: a Request is not a power of two in size
    std::vector<Request> ring;
    Request& request(uint32_t o) { return ring_data[o & ring_mask]; }
};

// A block's sites, found without a hash per access: each access instruction (key) gets a dense
// id the first time a block of this Block object sees it in a launch (ids are names, kept across
// the launch's blocks), and (warp, id) indexes a slot that holds the warp's site. A slot is this
// block's when its generation is the block's: a new block bumps the generation instead of
// clearing the slots.
struct SiteSlot {
    uint32_t generation = 0;
    uint32_t site = 0;
};

// The last site found for a key, by hash: a warp's lanes run one after another and repeat
// the same few instructions, so most lookups end here, without the id table and the slots.
struct SiteCacheEntry {
    uintptr_t key = 0;
    uint32_t warp = 0, generation = 0, site = 0;
};

struct BlockCounts {
    SiteCacheEntry cache[16];
    std::vector<Site> sites; // the first `used` are this block's; the rest wait to be reused
    size_t used = 0;
    std::vector<uintptr_t> id_keys; // open addressing: key -> id_values[i]; 0 is empty
    std::vector<uint32_t> id_values;
    size_t id_mask = 0; // id_keys.size() - 1; 0 while there is no table
    uint32_t ids = 0;
    std::vector<SiteSlot> slots; // slots[warp * stride + id]
    uint32_t stride = 0, warps = 0, generation = 0;
    void reset(unsigned warps);
    // A new launch: its instructions get ids from 0 again (a long-lived worker runs many
    // kernels; the ids, and each block's row of slots, stay as few as one kernel's sites).
    void forget_ids();
};

void counts_begin_launch(Launch& l);
// A device-memory access by `t` (check mode). `buffer`: the global buffer holding it, or null.
void counts_access(Launch& l, Block& b, Thread& t, uintptr_t addr, size_t n, bool write, bool shared,
                   const Buffer* buffer, uintptr_t pc);
// Its warp-level request alone (the thread's own counts are the caller's).
void counts_request(Launch& l, Block& b, unsigned linear, uintptr_t addr, size_t n, bool write, bool shared,
                    const Buffer* buffer, uintptr_t pc);
// The same in a Site found before (counts_site), for lane `lane` of its warp.
void counts_request_at(Launch& l, Block& b, Site& s, unsigned lane, uintptr_t addr, size_t n, bool write,
                       bool shared, const Buffer* buffer);
// Warp `warp`'s Site for `key` (pc << 1 | shared) in block b, made when it has none.
Site& counts_site(BlockCounts& bc, unsigned warp, uintptr_t key);
// A warp-level global request whose lanes came in line (lane L at line + L x n, in `buffer`),
// assembled elsewhere (check mode's inline checks): counted as finished.
void counts_line(Launch& l, uint32_t lanes, uintptr_t line, size_t n, bool write, const Buffer* buffer);
// The same for shared memory (lane L at line + L x n).
void counts_shared_line(Launch& l, uint32_t lanes, uintptr_t line, size_t n, bool write);
// `requests` such requests of whole warps, `sectors` the sectors they touched in all.
void counts_lines(Launch& l, uint64_t requests, uint64_t sectors, size_t n, bool write, const Buffer* buffer);
// Warp `warp`'s Site for `key` in block b, if it has one (none is made).
Site* counts_find_site(BlockCounts& bc, unsigned warp, uintptr_t key);
void counts_atomic(Launch& l, Thread& t, bool shared, const Buffer* buffer);
// Every live lane of warp `warp` (or of every warp, `warp` < 0) is past this point: its open
// requests are complete.
void counts_converged(Launch& l, Block& b, int warp);
// The block's threads that ran to the end go into the per-thread extremes (once a block: a
// loop that keeps them in registers, not a call per thread).
void counts_block_end(Launch& l, Block& b);
// Writes `"counts":{...}` into an open reply object.
void counts_write(Json& j, const LaunchCounts& c);

} // namespace gpubook::rt
