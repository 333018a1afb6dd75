// The worker's state: a Launch (one LAUNCH command), and per OS thread a Worker that runs
// blocks of it, each CUDA thread of a block on a fiber.
#pragma once

#include "../device/abi.h"
#include "diagnostic.h"
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

using KernelEntry = void (*)(void**);

struct Launch {
    uint64_t id = 0;
    KernelEntry entry = nullptr;
    void** args = nullptr;
    uintptr_t module_base = 0; // load address of the kernel's .so, for pc offsets
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    size_t dynamic_shared_bytes = 0;
    Mode mode = Mode::Check;
    uint64_t total_blocks = 0;
    unsigned threads_per_block = 0;
    std::atomic<uint64_t> next_block{0};
    std::atomic<bool> failed{false};
    // Some thread called __threadfence(): the kernel orders blocks itself (the "last block"
    // pattern), so the race checker stops reporting races between blocks.
    std::atomic<bool> fenced{false};
    std::mutex error_mutex;
    Diagnostic error; // the first failure; valid when `failed`
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

struct Fiber;

// One CUDA thread. `view` is what the device header reads; it must stay the first member.
struct Thread {
    gpubook_thread_view view;
    unsigned linear = 0;
    ThreadState state = ThreadState::Unstarted;
    Fiber* fiber = nullptr;  // the fiber it runs on, once started
    uintptr_t wait_pc = 0;   // call site of the barrier or warp collective it waits in
    int wait_line = 0;       // source line of the __syncthreads() it waits at (its identity)
    int barrier_pred = 0;
    int barrier_result = 0;
    WarpRequest warp{};
};

struct Warp {
    unsigned exists = 0;  // lanes that exist in this block
    unsigned arrived = 0; // lanes waiting in a warp collective
    unsigned exited = 0;
    uint16_t epoch = 0;   // number of collectives completed (orders lanes for the race checker)
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

    // The block being run.
    bool in_block = false;
    gpubook_block_view block_view{};
    uint64_t block_linear = 0;
    unsigned nthreads = 0;
    unsigned next_unstarted = 0;
    unsigned exited = 0;
    unsigned at_barrier = 0;
    uint32_t barrier_epoch = 0;
    int barrier_kind = 0;
    Thread threads[kMaxBlockThreads];
    Warp warps[kMaxWarps];
    unsigned ready[kMaxBlockThreads]; // FIFO of threads ready to resume
    unsigned ready_head = 0, ready_count = 0;
    Thread* current = nullptr;
    Fiber* current_fiber = nullptr;
    void* main_sp = nullptr;          // the scheduler's own context
    bool block_aborted = false;

    std::vector<Fiber*> fibers;       // every fiber this worker owns
    std::vector<Fiber*> free_fibers;  // those holding no CUDA thread
    SharedMemory shared;

    // For the hang reporter: where this OS thread was when the watchdog interrupted it.
    std::atomic<uintptr_t> sampled_pc{0};
    std::atomic<bool> sampled{false};
    uintptr_t last_access_pc = 0;     // check mode: the kernel's most recent memory access
    char* signal_stack = nullptr;
};

// The worker of the calling OS thread (null outside a launch).
extern thread_local Worker* tls_worker;

// All workers (index 0 runs on the main thread), and the launch in progress.
Worker& worker_at(int index);
int worker_count();
extern std::atomic<Launch*> g_active_launch;

// Scheduler (scheduler.cpp).
void prepare_worker(Worker& w, Launch& l);
void run_block(Worker& w, uint64_t block_linear);
// Called on a fiber: park the calling CUDA thread until the scheduler makes it ready again.
void park_current(Worker& w);
inline void make_ready(Worker& w, Thread& t) {
    t.state = ThreadState::Ready;
    w.ready[(w.ready_head + w.ready_count) % kMaxBlockThreads] = t.linear;
    w.ready_count++;
}
// Ends the running block with `d` (the launch keeps only its first failure). Never returns.
[[noreturn]] void fail_block(Worker& w, Diagnostic d);
// The (block, thread) of a CUDA thread, for messages.
void set_location(Diagnostic& d, const Worker& w, const Thread* t);

// Warp collectives (warp.cpp).
void resolve_warp(Worker& w, unsigned warp_index, unsigned lanes);
const char* warp_op_name(int op); // "__shfl_down_sync" ...

} // namespace gpubook::rt
