// Check mode's inline checks (device/check_inline.h, with the compiler pass): the worker keeps
// their thread-local state (device/check_state.h) up to date. Every function here is cheap and
// safe to call when no module uses the pass.
#pragma once

#include "../../device/check_state.h"

namespace gpubook::rt {

struct Worker;
struct Thread;
struct Block;
struct ThreadChecks;
struct ThreadCounts;

// A launch starts on this OS thread: the arena, the shadows, a new launch number (every site's
// slot is stale). `checked`: a check-mode launch that checks (not fast mode, not `engine`).
void inline_begin_launch(bool checked);
// The running thread (null: the scheduler runs, or a block loop, which sets it itself).
void inline_set_thread(const Thread* t);
// Check mode's block loop starts in block b: its threads run on loop_checks().
void inline_begin_loop(Block& b);
// The ThreadChecks a block loop's threads use while they run in the loop (one per OS thread).
ThreadChecks& loop_checks();
// The counts of the threads that ended inside block loops since the last call, into the extremes.
void inline_fold_loops(ThreadCounts& most, ThreadCounts& least);
// Some warp's race segment may have changed (a barrier, a fence, a warp collective, a block).
inline void inline_segments_moved() { gpubook_check_tls.seg_warp = ~0u; }
// The counts' Sites may have moved (a new one, a new block): the slots' join_site are stale.
inline void inline_sites_moved() { gpubook_check_tls.sites_epoch++; }
// Check mode's block loop ended: the runs of its sites (check_state.h) counted, or, when it ended
// early (`to_sites`: the rest of the block goes on on fibers), handed to their Sites.
void inline_end_loop(Worker& w, bool to_sites);

} // namespace gpubook::rt
