// The worker's state: a Launch (one LAUNCH command); per OS thread a Worker; per CUDA block
// being run a Block, each of its CUDA threads on a fiber. A Worker holds several Blocks at
// once when blocks wait for each other (persistent kernels), as a GPU keeps several resident.
#pragma once

#include "../device/abi.h"
#include "access/counts.h"
#include "diagnostic.h"
#include "recent.h"
#include "shared_memory.h"
#include "stack_pool.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace gpubook::rt {

constexpr unsigned kMaxBlockThreads = 1024;
constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxWarps = kMaxBlockThreads / kWarpSize;

enum class Mode { Check, Fast };

// What every CUDA thread of one block shares, and what one thread sees: the worker's copy of the
// coordinates it hands the device header (abi.h, gpubook_coords) when a thread runs.
struct gpubook_block_view {
    gpubook_dim3 block_idx;
    gpubook_dim3 block_dim;
    gpubook_dim3 grid_dim;
};
struct gpubook_thread_view {
    gpubook_dim3 thread_idx;
    const gpubook_block_view* block;
};

using KernelEntry = void (*)(void**);
using BlockLoopEntry = void (*)(void**, gpubook_block_loop*);

// The emulated device's shape (DEVICE command): it decides how many blocks are resident at once.
// Defaults: an sm_80-like device with 16 SMs.
struct DeviceShape {
    unsigned sms = 16;
    unsigned threads_per_sm = 2048;
    unsigned blocks_per_sm = 32;
    size_t shared_per_sm = 164 * 1024;
};
extern DeviceShape g_device;

// A vector clock with few entries: block -> the last release of that block this one has seen.
struct Clock {
    std::vector<std::pair<uint32_t, uint32_t>> entries; // sorted by block
    uint32_t get(uint32_t block) const;
    void join(const Clock& other);
    void raise(uint32_t block, uint32_t clock);
    void clear() { entries.clear(); }
};

struct Launch {
    uint64_t id = 0;
    KernelEntry entry = nullptr;
    BlockLoopEntry loop_entry = nullptr; // fast mode: the module's block loop, if it has one
    void** args = nullptr;
    uintptr_t module_base = 0; // load address of the kernel's .so, for pc offsets
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    size_t dynamic_shared_bytes = 0;
    Mode mode = Mode::Check;
    uint64_t total_blocks = 0;
    unsigned threads_per_block = 0;
    // Blocks the emulated device holds at once for this launch (threads and dynamic shared
    // memory per block against the device's shape; static shared memory lowers it once known).
    std::atomic<uint64_t> resident_limit{1};
    std::atomic<uint64_t> next_block{0};
    // Blocks a worker claims from next_block at once: 1 where blocks may wait for each other (a
    // grid the device holds at once), more for a larger grid in fast mode, so that each worker
    // streams through consecutive blocks' memory as a plain loop would, and takes the shared
    // counter's cache line less often.
    uint64_t claim_batch = 1;
    // Check mode: the first block started past resident_limit, only to explain a deadlock.
    std::atomic<uint64_t> over_capacity_from{UINT64_MAX};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    Diagnostic error; // the first failure; valid when `failed`
    LaunchCounts counts; // check mode
};

enum class ThreadState : uint8_t { Unstarted, Running, Ready, AtBarrier, AtWarp, Exited };

// A warp collective a lane is waiting in.
struct WarpRequest {
    int op;
    unsigned mask;
    uint64_t value;
    int arg;
    int width;
    uint64_t result;
};

// What a thread read last at a few spin-candidate instructions (volatile and atomic reads):
// the same value again from the same place means it is waiting for someone else.
struct SpinMemo {
    uintptr_t pc = 0;
    uintptr_t addr = 0;
    uint64_t value = 0;
};
constexpr unsigned kSpinMemos = 4;
constexpr unsigned kHotBuffers = 4;

struct Fiber;
struct Block;

// Check mode's per-thread bookkeeping, kept apart from Thread so the scheduler's hot loops over
// a block's threads touch less memory in both modes.
// The first three members are the part check mode's inline checks use (device/check_state.h,
// gpubook_thread_hot), which its block loop zeroes at each thread's start.
struct ThreadChecks {
    ThreadCounts counts;
    unsigned slice_accesses = 0; // device-memory accesses since it last yielded or started
    uint32_t started = 0;        // start_checked has run (0: a block loop started it, see loop_sync)
    uint32_t release_clock = 0;  // its block's clock at its last __threadfence (0: none yet)
    // It made a fence: a flag it sets releases its warp's accesses so far to the block's other
    // warps (races.cpp, LocalRelease).
    bool local_release = false;
    SpinMemo spin[kSpinMemos];
    unsigned spin_next = 0; // spin memos written (the first min(spin_next, kSpinMemos) are valid)
    uintptr_t spin_pc = 0, spin_addr = 0; // where it last waited without seeing a change
    // Its last volatile read of device or shared memory (pc, address): a flag it waited for,
    // which a race report on data it reads afterwards names (races.cpp).
    uintptr_t flag_pc = 0, flag_addr = 0;
    bool flag_set = false; // another thread had written the flag when it read it
};

// One CUDA thread. What the device header reads (its view) and its state live in arrays of the
// Block beside it (views(), state()): the per-block loops over all threads (start a block, end a
// block loop) then touch a few bytes a thread instead of a whole Thread.
struct Thread {
    Block* block = nullptr;
    unsigned linear = 0;
    Fiber* fiber = nullptr;  // the fiber it runs on, once started
    uintptr_t wait_pc = 0;   // call site of the barrier or warp collective it waits in
    int wait_line = 0;       // source line of the __syncthreads() it waits at (its identity)
    int barrier_pred = 0;
    int barrier_result = 0;
    WarpRequest warp{};
    ThreadChecks* chk = nullptr; // its entry in Block::checks
};

struct Warp {
    unsigned exists = 0;  // lanes that exist in this block
    unsigned arrived = 0; // lanes waiting in a warp collective
    unsigned exited = 0;
    uint16_t epoch = 0;   // number of collectives completed (orders lanes for the race checker)
    // The race checker's segment for this warp's global accesses, and the block's race_state
    // and the epoch it was taken at (races.cpp).
    uint16_t race_epoch = 0;
    uint32_t race_state = 0, race_seg = 0;
};

// One CUDA block being run: its threads, barrier and warp state, shared memory.
struct Block {
    gpubook_block_view view{};
    uint64_t linear = 0;
    uint64_t launch_id = 0; // the launch its threads' coordinates were laid out for
    unsigned nthreads = 0;
    unsigned next_unstarted = 0;
    unsigned exited = 0;
    unsigned at_barrier = 0;
    unsigned parked = 0; // at a barrier or in a warp collective
    uint32_t barrier_epoch = 0;
    int barrier_kind = 0;
    int barrier_line = 0;       // the first arrival's __syncthreads() (check mode)
    bool barrier_mixed = false; // a thread arrived at another one: check_same_call_site reports it
    Thread threads[kMaxBlockThreads];
    gpubook_thread_view views[kMaxBlockThreads]; // threads[i]'s coordinates, contiguous
    ThreadState states[kMaxBlockThreads];        // threads[i]'s state
    bool folded[kMaxBlockThreads]; // threads[i] ended inside a block loop (its counts folded there)
    unsigned folded_count = 0;     // how many did
    ThreadChecks checks[kMaxBlockThreads];
    Warp warps[kMaxWarps];
    unsigned ready[kMaxBlockThreads]; // FIFO of threads ready to resume
    unsigned ready_head = 0, ready_count = 0;
    SharedMemory shared;
    BlockCounts counts;
    // Co-residency: consecutive waits (spins that saw no change) since the block last made
    // progress; when every runnable thread has waited, the block is stalled and another runs.
    unsigned idle_spins = 0;
    bool stalled = false;
    bool over_capacity = false; // admitted past the device's limit, only to explain a deadlock
    bool aborted = false;
    // Happens-before between blocks (check mode): the block's own clock, ticked by each
    // __threadfence, and the releases of other blocks it has acquired.
    uint32_t clock = 1;
    Clock acquired;
    // Within the block: warp_acquired[y * kWarpSize + x] - 1 is the last epoch of warp x whose
    // accesses warp y has acquired through a flag (0: none). Empty until the first such acquire.
    std::vector<uint16_t> warp_acquired;
    // The block's own releases that published its clock (races.cpp): when a warp acquires a
    // clock that holds this block's entry (a hand-over through another block), the releases it
    // covers order their warps before the acquiring one, as a direct hand-over would.
    // own_acquired[y]: how many of them warp y has taken in.
    struct OwnRelease {
        uint32_t clock;
        uint16_t warp, upto;
    };
    std::vector<OwnRelease> own_releases;
    uint32_t own_acquired[kMaxWarps] = {};
    // Bumped whenever the block's barrier epoch or clock changes: its warps' race segments are
    // then out of date (races.cpp).
    uint32_t race_state = 0;
    void* shared_shadow = nullptr; // the race detector's shadow of `shared` (races.cpp)
    uint64_t shared_interval = 0;  // the shadow's entries of this block since its last barrier (races.cpp)
    uint64_t shared_layout = 0;    // the interval it began with: names its layout of shared memory
};

inline const gpubook_thread_view& view(const Thread& t) { return t.block->views[t.linear]; }
inline ThreadState& state(const Thread& t) { return t.block->states[t.linear]; }

// Bumped by its worker's thread, read by the watchdog's: relaxed atomics, which compile to
// plain moves, so the hot paths that bump it pay nothing for the second reader.
struct ProgressCounter {
    std::atomic<uint64_t> value{0};
    void operator++(int) { value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
    operator uint64_t() const { return value.load(std::memory_order_relaxed); }
};

struct Worker;
struct Fiber {
    void* sp = nullptr;
    Stack stack;
    Worker* worker = nullptr;
};

struct Worker {
    int index = 0;
    pthread_t os_thread{};
    Launch* launch = nullptr;

    Block* blk = nullptr;             // the block whose thread runs now (null: the scheduler runs)
    std::vector<Block*> resident;     // blocks started and not finished, in start order
    std::vector<Block*> spare_blocks; // finished ones, reused
    size_t next_resident = 0;         // round-robin position
    uint64_t claimed_next = 0, claimed_end = 0; // blocks claimed (Launch::claim_batch), not yet started
    bool start_next = false;          // a yield asks the next fiber to start a new thread
    // Incremented whenever something happens that can end a wait: a thread exits, a barrier or
    // warp collective releases, a waiting thread reads a new value, a block starts or ends.
    // The watchdog reads it too, to tell a slow launch from a stuck one.
    ProgressCounter progress;
    uint64_t stall_mark = 0;          // `progress` when every resident block last waited

    Thread* current = nullptr;        // while a block loop runs: null, or the last loop_sync's
    // The block loop running now (abi.h), and the thread it started it at. Its
    // threads are not bookkept one by one: loop_break() catches up when one calls the worker.
    gpubook_block_loop* loop = nullptr;
    unsigned loop_first = 0;
    const Thread* sampled_thread = nullptr; // the hang reporter's sample of a block loop's thread
    Fiber* current_fiber = nullptr;
    void* main_sp = nullptr;          // the scheduler's own context

    std::vector<Fiber*> fibers;       // every fiber this worker owns
    std::vector<Fiber*> free_fibers;  // those holding no CUDA thread

    // For the hang reporter: where this OS thread was when the watchdog interrupted it.
    // This worker's part of the launch's block counts (launch_resident, launch_blocks_done sum
    // them): on a line of their own, so that workers do not take turns on one counter a block.
    alignas(64) std::atomic<uint64_t> resident_blocks{0}; // started here and not finished
    std::atomic<uint64_t> finished_blocks{0};
    alignas(64) std::atomic<uintptr_t> sampled_pc{0};
    std::atomic<bool> sampled{false};
    std::atomic<bool> in_block{false};
    uintptr_t last_access_pc = 0;     // check mode: the kernel's most recent memory access
    Recent<Buffer, kHotBuffers> recent_buffers; // check mode: buffers accesses hit lately (this launch)
    char* signal_stack = nullptr;
};

// The worker of the calling OS thread (null outside a launch).
// `__thread`, not `thread_local`: it has no dynamic initialiser, so reading it from another file
// needs no call to a TLS wrapper (every checked access reads it).
extern __thread Worker* tls_worker;

// All workers (index 0 runs on the main thread), and the launch in progress.
Worker& worker_at(int index);
int worker_count();
// Blocks of the launch started and not finished, and finished, over all workers.
uint64_t launch_resident();
uint64_t launch_blocks_done();
extern std::atomic<Launch*> g_active_launch;

// Scheduler (scheduler.cpp).
// Runs blocks of `l` on this worker until none are left or the launch failed.
void run_blocks(Worker& w, Launch& l);
// Fast mode: when a block loop runs, makes its running thread the worker's current thread,
// with the threads before it exited, and ends the loop after it. Every worker entry point that
// uses w.current or may park calls it first; cheap when no loop runs.
void loop_break_slow(Worker& w);
inline void loop_break(Worker& w) {
    if (__builtin_expect(w.loop != nullptr, 0)) loop_break_slow(w);
}
// Check mode: when a block loop runs, makes its running thread the worker's current thread
// without ending the loop (an access the inline checks declined).
void loop_sync_slow(Worker& w);
inline void loop_sync(Worker& w) {
    if (__builtin_expect(w.loop != nullptr, 0)) loop_sync_slow(w);
}
// The thread a block loop runs now, from the calling OS thread's gpubook_current_coords.
Thread* loop_thread(const Worker& w);
// Called on a fiber: park the calling CUDA thread until the scheduler makes it ready again.
void park_current(Worker& w);
inline void make_ready(Block& b, Thread& t) {
    b.states[t.linear] = ThreadState::Ready;
    b.ready[(b.ready_head + b.ready_count) % kMaxBlockThreads] = t.linear;
    b.ready_count++;
}
// The running thread lets others run: the next unstarted thread of its block if any, else the
// next ready one. `waiting`: it read an unchanged value (a spin); when every runnable thread of
// the block is waiting, the block is stalled and the scheduler runs another block.
void yield_current(Worker& w, bool waiting);
// Ends the running block with `d` (the launch keeps only its first failure). Never returns.
[[noreturn]] void fail_block(Worker& w, Diagnostic d);
// The launch's error, unless another came first (fail_block, from outside a fiber).
void record_failure(Launch& l, Diagnostic d);
// The (block, thread) of a CUDA thread, for messages.
void set_location(Diagnostic& d, const Block& b, const Thread* t);

// Spin detection (spin.cpp): `value` was read at pc from addr by a volatile or atomic access.
// Yields when it is the value this thread read there last time (unless !may_yield); returns
// whether it did. A value that changed is progress.
bool spin_point(Worker& w, uintptr_t pc, uintptr_t addr, uint64_t value, bool may_yield = true);

// Warp collectives (warp.cpp).
void resolve_warp(Worker& w, Block& b, unsigned warp_index, unsigned lanes);
const char* warp_op_name(int op); // "__shfl_down_sync" ...

} // namespace gpubook::rt
