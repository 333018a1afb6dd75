// The block scheduler: every CUDA thread of a block runs on a fiber, until it exits, parks in a
// barrier or warp collective, or yields; the last thread to arrive at a barrier releases the
// others.
//
// A fiber that runs a thread to completion starts the next unstarted thread itself, without
// a switch, so a kernel with no barriers (vector add) runs a whole block as a plain loop on
// one stack. Only a thread that parks keeps its fiber; the next thread then gets a fresh
// one. Scheduling decisions happen on the parking fiber, which switches straight to the
// next fiber to run: one switch per park, no trip through a scheduler context.
//
// Blocks: a worker runs one block at a time, to the end, like check mode always did. Only when
// every runnable thread of its blocks waits (a spin that keeps reading the same value, see
// spin.cpp) does it start another block, up to what the emulated device holds at once, and
// take turns between them: blocks of a persistent kernel that wait for each other make
// progress together, as on a GPU.
#include "fiber.h"
#include "access/checks.h"
#include "access/inline_checks.h"
#include "access/races.h"
#include "signals.h"
#include "worker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

extern "C" {
__thread gpubook_coords gpubook_current_coords = {};

unsigned gpubook_rt_coord(int which) {
    return (&gpubook_current_coords.thread_idx.x)[which];
}
}

namespace gpubook::rt {

__thread Worker* tls_worker = nullptr;

namespace {

// The block whose coordinates gpubook_current_coords holds: a thread of the same block (the
// usual switch, at a barrier) changes only threadIdx. prepare_block forgets it when it lays out
// that Block again.
thread_local const gpubook_block_view* tls_coords_block = nullptr;

void set_coords(const gpubook_thread_view& v) {
    if (v.block == tls_coords_block) {
        gpubook_current_coords.thread_idx = v.thread_idx;
        return;
    }
    gpubook_current_coords = gpubook_coords{v.thread_idx, v.block->block_idx, v.block->block_dim, v.block->grid_dim};
    tls_coords_block = v.block;
}

void set_current(Worker& w, Thread* t) {
    w.current = t;
    if (t) {
        w.blk = t->block;
        set_coords(view(*t));
        inline_set_thread(t);
    }
}

void runner_main(void* p);

// A free fiber, or null when the process may have no more stacks (stack_pool.h).
Fiber* take_free_fiber(Worker& w) {
    if (!w.free_fibers.empty()) {
        Fiber* f = w.free_fibers.back();
        w.free_fibers.pop_back();
        return f;
    }
    Stack stack;
    if (!stack_allocate(&stack)) return nullptr;
    auto* f = new Fiber;
    f->stack = stack;
    // Stagger the stack tops: stacks are equally spaced, so unstaggered tops would all map to
    // the same cache sets and evict each other when a block's fibers take turns.
    f->stack.top -= (w.fibers.size() % 61) * 64;
    f->worker = &w;
    f->sp = fiber_prepare(f->stack.top, runner_main, f);
    w.fibers.push_back(f);
    return f;
}

// After an aborted launch, fibers hold half-run kernels: start them all afresh.
void reset_fibers(Worker& w) {
    w.free_fibers.clear();
    for (Fiber* f : w.fibers) {
        f->sp = fiber_prepare(f->stack.top, runner_main, f);
        w.free_fibers.push_back(f);
    }
}

inline void switch_fiber(Worker& w, Fiber* from, Fiber* to) {
    w.current_fiber = to;
    gpubook_fiber_switch(&from->sp, to->sp);
    w.current_fiber = from; // resumed
}

[[noreturn]] void report_stuck(Worker& w);

// Block `b` needs a fiber for its next thread and the process may have no more stacks: the
// emulator's limit, not the GPU's (threads that wait hold their stacks; blocks that wait for
// other blocks stay resident).
Diagnostic out_of_stacks(Worker& w, Block& b) {
    const Launch& l = *w.launch;
    Diagnostic d;
    if (l.over_capacity_from.load() != UINT64_MAX) {
        // Check mode admitted blocks past the device's limit to see whom the resident ones
        // wait for: on a GPU of this shape they would wait forever.
        d.cls = "hang";
        d.message = format("blocks wait for blocks that cannot run at the same time: the grid has %llu blocks and "
                           "the device holds %llu at once (%u SM%s, %llu threads per block), and every resident "
                           "block waits. The emulator admitted blocks past the device's limit to find which one "
                           "they wait for, and ran out of thread stacks at %zu blocks (this process may have %zu "
                           "stacks). On a GPU this launch never finishes. Launch no more blocks than the device "
                           "holds (one per SM, each looping over several pieces of work), or let a block wait "
                           "only for blocks that started before it.",
                           (unsigned long long)l.total_blocks, (unsigned long long)l.resident_limit.load(),
                           g_device.sms, g_device.sms == 1 ? "" : "s", (unsigned long long)l.threads_per_block,
                           w.resident.size(), stack_budget());
        // Where the first resident block waits, rather than the block that wanted a stack.
        const Block& first = *w.resident[0];
        for (unsigned i = 0; i < first.nthreads; i++) {
            const Thread& t = first.threads[i];
            if (t.chk && t.chk->spin_pc) {
                d.pc = t.chk->spin_pc;
                set_location(d, first, &t);
                return d;
            }
        }
    } else {
        d.cls = "launch_config";
        d.message = format("the emulator cannot hold this launch's waiting threads: %zu threads of %zu resident "
                           "blocks are waiting or running at once (blocks that wait for other blocks stay "
                           "resident, up to the %llu this device holds at once), and each needs a stack of its "
                           "own, of which this process may have %zu (Linux allows vm.max_map_count memory "
                           "mappings, two a stack). A GPU would hold them. Launch fewer blocks (a grid-stride "
                           "loop over the data) or fewer threads a block.",
                           w.fibers.size(), w.resident.size(), (unsigned long long)l.resident_limit.load(),
                           stack_budget());
    }
    set_location(d, b, b.next_unstarted < b.nthreads ? &b.threads[b.next_unstarted] : nullptr);
    return d;
}

// Runs whatever should run next in the current block, on behalf of `self`, whose thread parked
// or yielded (self_free: it holds no thread any more). Returns when `self` is picked to run
// again. Back to the scheduler when the block is done or stalled. Inlined: it is the hot path
// of every barrier.
__attribute__((always_inline)) inline void dispatch(Worker& w, Fiber* self, bool self_free) {
    Block& b = *w.blk;
    if (!b.stalled) {
        if (b.next_unstarted < b.nthreads && (w.start_next || b.ready_count == 0)) {
            w.start_next = true; // runner_main's loop starts it
            if (self_free) return;
            Fiber* next = take_free_fiber(w);
            if (!next) fail_block(w, out_of_stacks(w, b));
            switch_fiber(w, self, next);
            return;
        }
        w.start_next = false;
        if (b.ready_count) {
            Thread* t = &b.threads[b.ready[b.ready_head]];
            b.ready_head = (b.ready_head + 1) % kMaxBlockThreads;
            b.ready_count--;
            state(*t) = ThreadState::Running;
            if (t->fiber != self) {
                if (self_free) w.free_fibers.push_back(self);
                switch_fiber(w, self, t->fiber);
            }
            return;
        }
        if (b.exited != b.nthreads) report_stuck(w);
    }
    // The block is done or stalled: back to the scheduler, which may resume this fiber for
    // any block later.
    if (self_free) w.free_fibers.push_back(self);
    w.current_fiber = nullptr;
    gpubook_fiber_switch(&self->sp, w.main_sp);
    w.current_fiber = self;
}

// Check mode's per-thread bookkeeping starts afresh with each CUDA thread (the spin memos
// past spin_next are never read: they need no clearing). A block loop zeroes the counts and
// the slice itself (kernel_export.h), and the rest waits for the thread's first call into the
// worker (loop_sync, loop_break).
void start_checked_rest(ThreadChecks& c) {
    c.started = 1;
    c.release_clock = 0;
    c.local_release = false;
    c.spin_next = 0;
    c.spin_pc = c.spin_addr = 0;
    c.flag_pc = c.flag_addr = 0;
    c.flag_set = false;
}
void start_checked(Thread& t) {
    ThreadChecks& c = *t.chk;
    c.counts = ThreadCounts();
    c.slice_accesses = 0;
    start_checked_rest(c);
}

void thread_exit(Worker& w, Block& b, Thread& t) {
    state(t) = ThreadState::Exited;
    b.exited++;
    b.warps[t.linear / kWarpSize].exited |= 1u << (t.linear % kWarpSize);
    b.idle_spins = 0;
    w.progress++;
}

// A thread that ran in a block loop uses its own ThreadChecks again.
void own_checks(Thread& t) { t.chk = &t.block->checks[t.linear]; }

// Threads [from, to) of `b` ran to the end inside a block loop.
void loop_exited(Block& b, unsigned from, unsigned to) {
    if (from >= to) return;
    std::memset(b.states + from, int(ThreadState::Exited), to - from);
    std::memset(b.folded + from, 1, to - from);
    b.folded_count += to - from;
    for (unsigned wi = from / kWarpSize; wi <= (to - 1) / kWarpSize; wi++) {
        unsigned lo = std::max(from, wi * kWarpSize) - wi * kWarpSize;
        unsigned hi = std::min(to, (wi + 1) * kWarpSize) - wi * kWarpSize; // lanes [lo, hi)
        unsigned upto_hi = hi == kWarpSize ? ~0u : (1u << hi) - 1;
        b.warps[wi].exited |= upto_hi & ~((1u << lo) - 1);
    }
    b.exited += to - from;
}

// Fast mode, and check mode with the compiler pass: the block's remaining threads as one loop
// in the kernel module (abi.h, gpubook_block_loop). Returns when they are done, or when the thread that ended the loop
// early (loop_break_slow: it called a barrier ...) has run to its end.
void run_block_loop(Worker& w, Block& b) {
    gpubook_block_loop loop{b.next_unstarted, b.nthreads};
    w.loop = &loop;
    w.loop_first = b.next_unstarted;
    set_current(w, nullptr);
    if (w.launch->mode == Mode::Check) inline_begin_loop(b);
    // A fault in the loop's prologue (a kernel's big frame, probed page by page) belongs to the
    // loop's first thread.
    set_coords(b.views[b.next_unstarted]);
    w.launch->loop_entry(w.launch->args, &loop);
    if (w.loop == &loop) { // every thread ran to its end
        w.loop = nullptr;
        if (w.launch->mode == Mode::Check) inline_end_loop(w, false);
        loop_exited(b, w.loop_first, b.nthreads);
        b.next_unstarted = b.nthreads;
        b.idle_spins = 0;
        w.progress++;
    } else { // loop_break_slow made the last thread the current one; it has returned now
        thread_exit(w, b, b.threads[loop.end - 1]);
    }
    if (w.current) own_checks(*w.current);
    set_current(w, nullptr);
}

// Every fiber runs this loop: start threads while nothing waits to resume, then hand over.
void runner_main(void* p) {
    auto* self = static_cast<Fiber*>(p);
    Worker& w = *self->worker;
    for (;;) {
        Block* b = w.blk;
        while (!b->stalled && b->next_unstarted < b->nthreads && (b->ready_count == 0 || w.start_next)) {
            w.start_next = false;
            if (w.launch->loop_entry) {
                run_block_loop(w, *b);
                if (b->exited == b->nthreads && b->shared.unwritten_read()) report_unwritten_read(w, *b);
                continue;
            }
            Thread& t = b->threads[b->next_unstarted++];
            state(t) = ThreadState::Running;
            t.fiber = self;
            if (w.launch->mode == Mode::Check) start_checked(t);
            set_current(w, &t);
            w.launch->entry(w.launch->args);
            thread_exit(w, *b, t);
            if (b->exited == b->nthreads && b->shared.unwritten_read()) report_unwritten_read(w, *b);
        }
        set_current(w, nullptr);
        dispatch(w, self, true);
    }
}

std::vector<unsigned> threads_in(const Block& b, ThreadState s) {
    std::vector<unsigned> out;
    for (unsigned i = 0; i < b.nthreads; i++)
        if (b.states[i] == s) out.push_back(i);
    return out;
}

// Nothing can run, yet not every thread has exited: explain who waits for whom.
[[noreturn]] void report_stuck(Worker& w) {
    Block& b = *w.blk;
    const unsigned* dim = w.launch->block;
    Diagnostic d;
    d.cls = "barrier_divergence";
    // A warp collective that lacks lanes is the most specific explanation: look there first.
    for (unsigned wi = 0; wi < (b.nthreads + kWarpSize - 1) / kWarpSize; wi++) {
        const Warp& wp = b.warps[wi];
        if (!wp.arrived) continue;
        unsigned lane0 = unsigned(__builtin_ctz(wp.arrived));
        const Thread& t0 = b.threads[wi * kWarpSize + lane0];
        unsigned missing = t0.warp.mask & wp.exists & ~wp.arrived;
        std::vector<unsigned> waiting, exited, at_barrier;
        for (unsigned l = 0; l < kWarpSize; l++) {
            unsigned bit = 1u << l, lin = wi * kWarpSize + l;
            if (wp.arrived & bit) waiting.push_back(lin);
            if (missing & bit) {
                if (wp.exited & bit) exited.push_back(lin);
                else at_barrier.push_back(lin);
            }
        }
        std::string why;
        if (!exited.empty()) why += describe_threads(exited, dim) + " already returned";
        if (!at_barrier.empty())
            why += std::string(why.empty() ? "" : ", and ") + describe_threads(at_barrier, dim) + " wait at __syncthreads()";
        if (why.empty()) why = "the lanes named in the mask wait in different warp functions";
        d.message = format("warp divergence: %s (warp %u) wait in %s with mask 0x%08x, but %s. Every lane "
                           "named in the mask must call the same warp function; on a GPU this is undefined "
                           "behaviour and may hang.",
                           describe_threads(waiting, dim).c_str(), wi, warp_op_name(t0.warp.op), t0.warp.mask,
                           why.c_str());
        d.pc = t0.wait_pc;
        set_location(d, b, &t0);
        fail_block(w, std::move(d));
    }
    std::vector<unsigned> waiting = threads_in(b, ThreadState::AtBarrier);
    std::vector<unsigned> exited = threads_in(b, ThreadState::Exited);
    const Thread* first = waiting.empty() ? nullptr : &b.threads[waiting[0]];
    d.message = format("barrier divergence: %s wait at __syncthreads(), but %s of the same block already "
                       "returned. Every thread of a block must reach every __syncthreads(); on a GPU this is "
                       "undefined behaviour (it may hang, or skip the barrier and race). Let all threads reach "
                       "the barrier and guard the work (if (i < n) ...) instead of returning early.",
                       describe_threads(waiting, dim).c_str(), describe_threads(exited, dim).c_str());
    if (first) d.pc = first->wait_pc;
    set_location(d, b, first);
    fail_block(w, std::move(d));
}

// Lays out block `linear` of the launch in `b`, every thread unstarted.
void prepare_block(Block& b, Launch& l, uint64_t linear, bool over_capacity) {
    unsigned c[3];
    linear_to_coords(linear, l.grid, c);
    if (tls_coords_block == &b.view) tls_coords_block = nullptr;
    b.view.block_idx = gpubook_dim3{c[0], c[1], c[2]};
    b.view.block_dim = gpubook_dim3{l.block[0], l.block[1], l.block[2]};
    b.view.grid_dim = gpubook_dim3{l.grid[0], l.grid[1], l.grid[2]};
    b.linear = linear;
    b.nthreads = l.threads_per_block;
    b.next_unstarted = b.exited = b.at_barrier = b.parked = 0;
    b.barrier_epoch = 0;
    b.barrier_mixed = false;
    b.ready_head = b.ready_count = 0;
    if (b.launch_id != l.id) { // thread coordinates are the same for every block of a launch
        b.launch_id = l.id;
        b.counts.forget_ids();
        for (unsigned i = 0; i < b.nthreads; i++) {
            Thread& t = b.threads[i];
            unsigned tc[3];
            linear_to_coords(i, l.block, tc);
            b.views[i].thread_idx = gpubook_dim3{tc[0], tc[1], tc[2]};
            b.views[i].block = &b.view;
            t.block = &b;
            t.linear = i;
            t.chk = &b.checks[i];
        }
    }
    std::memset(b.states, int(ThreadState::Unstarted), b.nthreads);
    std::memset(b.folded, 0, b.nthreads);
    b.folded_count = 0;
    for (unsigned i = 0; i < kMaxWarps; i++) {
        unsigned first = i * kWarpSize;
        unsigned n = b.nthreads > first ? b.nthreads - first : 0;
        b.warps[i].exists = n >= 32 ? 0xffffffffu : (1u << n) - 1;
        b.warps[i].arrived = b.warps[i].exited = 0;
        b.warps[i].epoch = 0;
    }
    b.shared.begin_block(l.dynamic_shared_bytes);
    if (l.mode == Mode::Check) {
        races_begin_block(b);
        b.counts.reset((b.nthreads + kWarpSize - 1) / kWarpSize);
    }
    b.idle_spins = 0;
    b.stalled = false;
    b.aborted = false;
    b.over_capacity = over_capacity;
}

bool blocks_left(const Worker& w, const Launch& l) {
    return w.claimed_next < w.claimed_end || l.next_block.load(std::memory_order_relaxed) < l.total_blocks;
}

// Starts the launch's next block on this worker, or returns null when none is left.
Block* admit(Worker& w, Launch& l, bool over_capacity) {
    if (w.claimed_next == w.claimed_end) {
        uint64_t first = l.next_block.fetch_add(l.claim_batch, std::memory_order_relaxed);
        if (first >= l.total_blocks) return nullptr;
        w.claimed_next = first;
        w.claimed_end = std::min(first + l.claim_batch, l.total_blocks);
    }
    uint64_t linear = w.claimed_next++;
    Block* b;
    if (!w.spare_blocks.empty()) {
        b = w.spare_blocks.back();
        w.spare_blocks.pop_back();
    } else {
        b = new Block;
        b->shared.init();
    }
    prepare_block(*b, l, linear, over_capacity);
    if (over_capacity) {
        uint64_t cur = l.over_capacity_from.load();
        while (linear < cur && !l.over_capacity_from.compare_exchange_weak(cur, linear)) {
        }
    }
    w.resident_blocks.fetch_add(1, std::memory_order_relaxed);
    w.resident.push_back(b);
    w.progress++;
    return b;
}

void retire(Worker& w, Launch& l, Block* b) {
    if (l.mode == Mode::Check) {
        counts_converged(l, *b, -1);
        counts_block_end(l, *b);
    }
    for (size_t i = 0; i < w.resident.size(); i++) {
        if (w.resident[i] != b) continue;
        w.resident.erase(w.resident.begin() + long(i));
        if (w.next_resident > i) w.next_resident--;
        break;
    }
    w.spare_blocks.push_back(b);
    w.resident_blocks.fetch_sub(1, std::memory_order_relaxed);
    w.finished_blocks.fetch_add(1, std::memory_order_relaxed);
    w.progress++;
}

bool may_admit(Worker& w, Launch& l) {
    if (!blocks_left(w, l)) return false;
    // Static shared memory is known once a block has declared it: it may hold fewer at once.
    size_t shared = 0;
    for (const Block* b : w.resident) shared = std::max(shared, b->shared.static_bytes());
    if (shared) {
        uint64_t by_shared = g_device.sms * (g_device.shared_per_sm / (shared + l.dynamic_shared_bytes));
        if (by_shared < l.resident_limit.load()) l.resident_limit.store(std::max<uint64_t>(1, by_shared));
    }
    return launch_resident() < l.resident_limit.load();
}

// The next block to run: a resident one that is not stalled (round robin), else a new one,
// else (every block waits) another round, else in check mode a block past the device's limit
// (to explain a deadlock), else nothing has changed: pause, and let the watchdog decide.
Block* pick(Worker& w, Launch& l) {
    size_t n = w.resident.size();
    for (size_t k = 0; k < n; k++) {
        size_t i = (w.next_resident + k) % n;
        if (!w.resident[i]->stalled) {
            w.next_resident = i + 1;
            return w.resident[i];
        }
    }
    if (n == 0 || may_admit(w, l)) {
        if (Block* b = admit(w, l, false)) return b;
    }
    if (n == 0) return nullptr;
    // Every resident block waits.
    if (w.progress == w.stall_mark) {
        if (l.mode == Mode::Check && blocks_left(w, l)) {
            if (Block* b = admit(w, l, true)) return b;
        }
        // Nothing can change what they wait for (unless the host writes mapped memory): let the
        // watchdog report the hang, without burning a core meanwhile.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    w.stall_mark = w.progress;
    for (Block* b : w.resident) b->stalled = false;
    w.next_resident = 1;
    return w.resident[0];
}

// Runs `b` until it is done, stalled or failed.
void resume(Worker& w, Block& b) {
    b.stalled = false;
    b.idle_spins = 0;
    w.blk = &b;
    Fiber* f;
    if (b.ready_count) {
        Thread* t = &b.threads[b.ready[b.ready_head]];
        b.ready_head = (b.ready_head + 1) % kMaxBlockThreads;
        b.ready_count--;
        state(*t) = ThreadState::Running;
        set_current(w, t);
        f = t->fiber;
    } else {
        f = take_free_fiber(w); // runner_main starts the next unstarted thread
        if (!f) {
            record_failure(*w.launch, out_of_stacks(w, b));
            b.aborted = true;
            return;
        }
        w.start_next = true;
    }
    w.in_block.store(true);
    w.current_fiber = f;
    gpubook_fiber_switch(&w.main_sp, f->sp);
    w.in_block.store(false);
    set_current(w, nullptr);
    w.current_fiber = nullptr;
}

} // namespace

Thread* loop_thread(const Worker& w) {
    const gpubook_dim3& t = gpubook_current_coords.thread_idx;
    const gpubook_dim3& d = w.blk->view.block_dim;
    size_t i = t.x + size_t(d.x) * (t.y + size_t(d.y) * t.z);
    return &w.blk->threads[i < w.blk->nthreads ? i : 0];
}

void loop_break_slow(Worker& w) {
    Block& b = *w.blk;
    Thread& t = *loop_thread(w);
    if (w.current) own_checks(*w.current);
    if (w.launch->mode == Mode::Check) {
        b.checks[t.linear] = loop_checks(); // it goes on on a fiber
        inline_end_loop(w, true); // lanes no longer run one after another
    }
    loop_exited(b, w.loop_first, t.linear);
    if (t.linear > w.loop_first) {
        b.idle_spins = 0;
        w.progress++;
    }
    b.next_unstarted = t.linear + 1;
    w.loop->end = t.linear + 1; // the loop ends after this thread
    w.loop = nullptr;
    state(t) = ThreadState::Running;
    t.fiber = w.current_fiber;
    set_current(w, &t);
    if (w.launch->mode == Mode::Check && !t.chk->started) start_checked_rest(*t.chk);
}

void loop_sync_slow(Worker& w) {
    Thread& t = *loop_thread(w);
    if (w.current == &t) return;
    if (w.current) own_checks(*w.current);
    w.current = &t; // the coordinates are the loop's already
    state(t) = ThreadState::Running;
    t.fiber = w.current_fiber;
    t.chk = &loop_checks(); // what the inline checks count in
    if (!t.chk->started) start_checked_rest(*t.chk);
}

void set_location(Diagnostic& d, const Block& b, const Thread* t) {
    d.has_location = true;
    const gpubook_dim3& bi = b.view.block_idx;
    d.block[0] = bi.x; d.block[1] = bi.y; d.block[2] = bi.z;
    if (t) {
        d.thread[0] = view(*t).thread_idx.x;
        d.thread[1] = view(*t).thread_idx.y;
        d.thread[2] = view(*t).thread_idx.z;
    }
}

void record_failure(Launch& l, Diagnostic d) {
    std::lock_guard<std::mutex> lock(l.error_mutex);
    if (!l.failed.load()) {
        l.error = std::move(d);
        l.failed.store(true);
    }
}

void fail_block(Worker& w, Diagnostic d) {
    record_failure(*w.launch, std::move(d));
    w.blk->aborted = true;
    Fiber* self = w.current_fiber;
    w.current_fiber = nullptr;
    gpubook_fiber_switch(&self->sp, w.main_sp); // never resumed: reset_fibers restarts it
    __builtin_unreachable();
}

void park_current(Worker& w) {
    Thread* me = w.current;
    dispatch(w, w.current_fiber, false);
    set_current(w, me);
}

void yield_current(Worker& w, bool waiting) {
    loop_break(w);
    Block& b = *w.blk;
    Thread& t = *w.current;
    t.chk->slice_accesses = 0;
    if (waiting) {
        b.idle_spins++;
        // Runnable: every thread not exited nor parked, this one included.
        if (b.idle_spins >= b.nthreads - b.exited - b.parked) b.stalled = true;
    } else if (b.ready_count == 0 && b.next_unstarted == b.nthreads) {
        return; // nobody else to run
    }
    make_ready(b, t);
    // Prefer a thread that has not started: it may be the one that writes what this one waits for.
    w.start_next = true;
    park_current(w);
}

void run_blocks(Worker& w, Launch& l) {
    w.launch = &l;
    inline_begin_launch(l.mode == Mode::Check && !g_access_checks_off);
    w.stall_mark = w.progress - 1;
    w.claimed_next = w.claimed_end = 0;
    w.recent_buffers.clear();
    bool aborted = false;
    while (!l.failed.load(std::memory_order_relaxed)) {
        Block* b = pick(w, l);
        if (!b) break;
        resume(w, *b);
        if (b->aborted) {
            aborted = true;
            break;
        }
        if (b->exited == b->nthreads) retire(w, l, b);
    }
    // A failure elsewhere (or here) leaves blocks half run: drop them and their fibers.
    if (aborted || !w.resident.empty()) {
        for (Block* b : w.resident) {
            w.spare_blocks.push_back(b);
            w.resident_blocks.fetch_sub(1, std::memory_order_relaxed);
        }
        w.resident.clear();
        reset_fibers(w);
    }
    w.next_resident = 0;
    w.blk = nullptr;
    w.loop = nullptr;
    w.sampled_thread = nullptr;
    w.launch = nullptr;
}

} // namespace gpubook::rt
