// What check mode's inline checks (device/check_inline.h, with the compiler pass) share with the
// worker: plain C types whose layout the worker's own structs start with (worker/access/
// inline_checks.cpp asserts it), one initial-exec thread-local struct, and the call that takes
// every access the inline path declines.
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
#define GPUBOOK_RACE_THREAD_MASK 0x7ffu
#define GPUBOOK_RACE_WRITE (1u << 11)
#define GPUBOOK_RACE_BYTES_SHIFT 13
#define GPUBOOK_RACE_BYTES_MASK (0xfu << 13)

// A warp-level request being assembled (counts.h Request), and one access instruction of one
// warp (counts.h Site): the part the inline path reads and writes.
struct gpubook_request {
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
    struct gpubook_request* ring;
    uint32_t ring_mask;
};

// What the worker found for an access site the last time one of its accesses went the long
// way: the buffer, the race checker's site number, and the counts' Site of one warp.
struct gpubook_site_slot {
    uint32_t launch, site;        // valid for this launch number and pass site
    uint32_t race_meta;           // the site, placed in a compact entry's meta
    uint32_t count_warp, count_gen; // count_site belongs to this warp and counts generation
    uintptr_t lo, end;            // the buffer [lo, end)
    const void* buffer;
    struct gpubook_count_site* count_site;
};
#define GPUBOOK_SITE_SLOTS 256

struct gpubook_check_state {
    uintptr_t arena_lo, arena_bytes;   // device memory (0 bytes: nothing is checked inline)
    uintptr_t shared_lo, shared_bytes; // the running block's shared memory
    uint32_t launch;                   // this OS thread's launch number
    uint32_t thread;                   // the running CUDA thread, linear in its block
    struct gpubook_thread_hot* hot;    // its ThreadChecks
    uint32_t seg, seg_warp;            // the race segment of warp seg_warp (~0: none known)
    uint32_t first_seg;                // the launch's first segment
    uint32_t count_gen;                // bumped whenever a Site may have moved
    // Check mode's block loop runs its threads on one ThreadChecks of the worker's, loop_hot
    // (hot points there while it runs one): a thread's counts fold into the block's extremes at
    // its end, without a call while they equal the last thread's folded (loop_last).
    struct gpubook_thread_hot* loop_hot;
    uint64_t loop_last[6];
    struct gpubook_race_entry* compact; // one a 4-byte word of the arena; null: no race check
    uint64_t* unwritten;               // one bit a word, 1 = never written, for the first
    uintptr_t unwritten_words;         // this many words
    struct gpubook_site_slot slots[GPUBOOK_SITE_SLOTS];
};

extern "C" {
extern __thread struct gpubook_check_state gpubook_check_tls __attribute__((tls_model("initial-exec")));
// Everything the inline path declines: check_access's whole work, then the site's slot filled
// for the next time.
void gpubook_rt_check_slow(const void* p, unsigned long n, unsigned flags, struct gpubook_site_slot* slot,
                           unsigned site);
// A shared-memory access: check_shared's whole work (the inline path takes none of them yet).
void gpubook_rt_check_shared(const void* p, unsigned long n, unsigned flags);
// A block loop's thread ended with counts unlike loop_last: fold them in.
void gpubook_rt_loop_fold(void);
}

#endif
