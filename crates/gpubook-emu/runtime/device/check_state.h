// What check mode's inline checks (device/check_inline.h, with the compiler pass) share with the
// worker: plain C types whose layout the worker's own structs start with (worker/access/
// inline_checks.cpp asserts it), one initial-exec thread-local struct, and the calls into the
// worker.
//
// The inline path takes an access only when it can do all that check mode does for it and
// decides before it writes anything; otherwise the worker's check_access does it whole
// (crates/gpubook-emu/DESIGN.md, "What check mode's speed is made of", step 4).
#ifndef GPUBOOK_CHECK_STATE_H
#define GPUBOOK_CHECK_STATE_H

#include <stddef.h>
#include <stdint.h>

// The first members of the worker's ThreadChecks: the thread's counts (ThreadCounts), its
// accesses since it last yielded, and whether the worker has started it (0 when check mode's
// block loop has just zeroed the rest; the worker's first call for it does its bookkeeping).
struct gpubook_thread_hot {
    uint64_t global_loads, global_stores, shared_loads, shared_stores, atomics, barriers;
    uint32_t slice;
    uint32_t started;
};

// The race checker's compact entry of a 4-byte word (races.cpp GlobalAccess).
struct gpubook_race_entry {
    uint32_t seg, meta;
};
// A word's full shadow (races.cpp GlobalWord), once a second thread touched it this launch: the
// compact entry then keeps this launch's segment and no thread.
struct gpubook_race_word {
    struct gpubook_race_entry write, read1, read2;
};
// A race segment (races.cpp Segment): which block, and when in it.
struct gpubook_race_segment {
    uint32_t block, epoch, clock, warp_epoch;
};
#define GPUBOOK_RACE_THREAD_MASK 0x7ffu
#define GPUBOOK_RACE_WRITE (1u << 11)
#define GPUBOOK_RACE_BYTES_SHIFT 13
#define GPUBOOK_RACE_BYTES_MASK (0xfu << 13)

// The race checker's shadow of a 4-byte word of shared memory (races.cpp SharedWord): the
// barrier interval of its entries, the last write and the last two reads in it.
struct gpubook_shared_access {
    uint32_t pc_bytes; // the site's pc offset << 4 | the bytes of the word accessed
    uint16_t who;      // thread + 1 (0: none) | GPUBOOK_SHARED_WRITE (| sync flags the inline path never has)
    uint16_t warp_epoch;
};
struct gpubook_shared_word {
    uint64_t interval;
    struct gpubook_shared_access write, read1, read2;
};
#define GPUBOOK_SHARED_THREAD_MASK 0x1fffu
#define GPUBOOK_SHARED_WRITE (1u << 13)

// The access counts' assembly of a warp's request at an access (worker/access/counts.h Site and
// Request, their first fields): per lane its next execution, the open requests in a ring.
struct gpubook_count_request {
    uint32_t occurrence, lanes, size;
    bool write, shared, in_line;
    uintptr_t line;
    const void* line_buffer;
    uintptr_t addr[32];
    const void* buffer[32];
};
struct gpubook_count_site {
    uintptr_t key;
    unsigned warp;
    uint32_t occurrences[32];
    uint32_t floor, retired, newest;
    struct gpubook_count_request* ring_data;
    uint32_t ring_mask;
};

// What the worker found for an access site the last time one of its accesses went the long
// way: the buffer, the race checker's site number, the key of its counts.
//
// And the site's run. Inside a block loop a warp's lanes run one after another, each to its
// end, so the lanes' first executions of the site come in lane order: while each comes in line
// (lane L + 1 at lane L's address + run_size), their warp-level request is assembled here, with
// no counts Site (worker/access/counts.h). The worker counts it as one request when a later warp
// starts the site or the loop ends, and hands its lanes to the warp's Site, in order, as if each
// had called, when anything else comes first: a lane's second execution, a lane out of line or
// out of turn, a slow path at the site, the loop's end in the middle of the warp.
#define GPUBOOK_NO_RUN 0xffffffffu
#define GPUBOOK_NO_SITE 0xffffffffu
struct gpubook_site_slot {
    uint32_t site;                // the pass site it holds (GPUBOOK_NO_SITE: none this launch)
    uint32_t shared;              // 1: a __shared__ variable (of the block whose layout is `layout`)
    uintptr_t lo, limit;          // the buffer or variable: the access fits in it at lo + [0, limit]
    const void* buffer;           // global: the Buffer
    uint64_t layout;              // shared: the state's shared_layout when it was filled
    uintptr_t count_pc;           // the key of the site's counts Sites
    uint32_t race_meta;           // global: the site, placed in a compact entry's meta
    uint32_t shared_pc_bytes;     // shared: the site, placed in a shadow entry's pc_bytes
    uint32_t run_warp;            // GPUBOOK_NO_RUN: no run
    uint32_t run_next;            // the thread (linear) that joins next; GPUBOOK_NO_RUN after lane 31
    uintptr_t run_next_addr;      // at this address
    uint32_t run_first_lane;      // lanes run_first_lane up to run_next's have joined
    uint32_t run_size, run_write; // the site's access
    // What the worker knows of the site's counts Sites in the running block loop (while
    // known_loop is the state's loop): of the warps not yet past the site, at most sited_warp
    // has one. Any other warp's first lane begins a run inline.
    uint32_t known_loop, sited_warp;
    // Runs of whole warps the inline code ended (a later warp began one): requests, sectors.
    uint64_t tally_requests, tally_sectors;
    // The counts Site of warp join_warp at this site that gpubook_rt_count found last, while
    // join_epoch is the state's sites_epoch (the Site has not moved): a lane whose request an
    // earlier lane opened joins it inline, and the worker skips its lookup.
    struct gpubook_count_site* join_site;
    uint32_t join_warp;
    uint64_t join_epoch;
};
#define GPUBOOK_SITE_SLOTS 256

struct gpubook_check_state {
    uintptr_t arena_lo, arena_bytes;   // device memory (0 bytes: nothing is checked inline)
    uintptr_t shared_lo, shared_bytes; // the running block's shared memory
    uint32_t thread;                   // the running CUDA thread, linear in its block
    struct gpubook_thread_hot* hot;    // its ThreadChecks
    uint32_t seg, seg_warp;            // the race segment of warp seg_warp (~0: none known)
    // Shared memory, known with seg_warp (gpubook_rt_warp_segment fills them): the warp's epoch,
    // the block's barrier interval, its layout (the interval it began with), its race shadow
    // (null: shared accesses all go to the worker), the worker's count of its bytes never
    // written and their bitmap (a bit a byte), and its count of noted reads of such bytes
    // (worker/shared_memory.h).
    uint16_t shared_epoch;
    uint64_t shared_interval, shared_layout;
    struct gpubook_shared_word* shared_shadow;
    size_t* shared_unwritten;
    uint64_t* shared_unwritten_bits;
    const size_t* shared_noted_reads;
    uint32_t first_seg;                // the launch's first segment
    // Check mode's block loop runs its threads on one ThreadChecks of the worker's, loop_hot
    // (hot points there while it runs one): a thread's counts fold into the block's extremes at
    // its end, without a call while its loads and stores (global, shared) equal the last thread's
    // folded (loop_last) and the worker has not started it (only the worker counts anything else).
    struct gpubook_thread_hot* loop_hot;
    uint64_t loop_last[4];
    struct gpubook_race_entry* compact; // one a 4-byte word of the arena; null: no race check
    struct gpubook_race_word* global;   // one a word, for the words whose compact entry hands over
    const struct gpubook_race_segment* segments; // this launch's, from first_seg (races.cpp g_segments)
    uint32_t block;                     // the running block's linear index (known with seg_warp)
    uint64_t* unwritten;               // one bit a word, 1 = never written, for the first
    uintptr_t unwritten_words;         // this many words
    uint32_t loop;                     // the block loop's number on this OS thread
    uint64_t sites_epoch;              // bumped when the counts' Sites may move (a new one, a block)
    uint64_t touched[GPUBOOK_SITE_SLOTS / 64]; // slots with a run or a tally in this loop
    struct gpubook_site_slot slots[GPUBOOK_SITE_SLOTS];
};

// What the inline checks and the worker both do to a run (not instrumented, in the kernel).
#define GPUBOOK_STATE_FN static inline __attribute__((always_inline, no_instrument_function))

// The thread that joins a run after `thread`: none after a warp's lane 31.
GPUBOOK_STATE_FN uint32_t gpubook_run_next(uint32_t thread) {
    return (thread & 31) == 31 ? GPUBOOK_NO_RUN : thread + 1;
}

// A run begins at slot `i`: `thread`'s access of `n` bytes at `a`.
GPUBOOK_STATE_FN void gpubook_begin_run(struct gpubook_check_state* s, unsigned i, uint32_t thread, uintptr_t a,
                                        unsigned long n) {
    struct gpubook_site_slot* slot = &s->slots[i];
    slot->run_warp = thread >> 5;
    slot->run_first_lane = thread & 31;
    slot->run_next = gpubook_run_next(thread);
    slot->run_next_addr = a + n;
    s->touched[i / 64] |= (uint64_t)1 << (i % 64);
}

extern "C" {
extern __thread struct gpubook_check_state gpubook_check_tls __attribute__((tls_model("initial-exec")));
// A global access the inline path declines: check_access's whole work (the slot's run handed to
// its Site first), then the site's slot filled for the next time.
void gpubook_rt_check_slow(const void* p, unsigned long n, unsigned flags, struct gpubook_site_slot* slot,
                           unsigned site);
// The running thread's warp has no race segment in the state (it is a new warp, or a barrier
// or fence moved the segments): seg, seg_warp and the shared_* fields for it. Changes nothing else.
void gpubook_rt_warp_segment(void);
// An access the inline path checked and counted for its thread, but not the next lane of
// its site's run: its warp-level request, in its warp's Site (the slot's run of this warp handed
// to the Site first), or the first lane of a run when its warp has no Site here in a block loop
// (the slot's run of an earlier warp counted first).
void gpubook_rt_count(struct gpubook_site_slot* slot, const void* p, unsigned long n, unsigned flags);
// A run the inline code ends that is not a whole warp in line: the worker counts it.
void gpubook_rt_run_end(struct gpubook_site_slot* slot);
// A shared-memory access the inline path declines: check_shared's whole work (the slot's run
// handed to its Site first), then the site's slot filled for the next time.
void gpubook_rt_check_shared(const void* p, unsigned long n, unsigned flags, struct gpubook_site_slot* slot,
                             unsigned site);
// A block loop's thread ended with counts unlike loop_last, or started by the worker: fold them in.
void gpubook_rt_loop_fold(void);
}

#endif
