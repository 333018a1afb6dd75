// The block scheduler: every CUDA thread of a block runs on a fiber, until it exits or
// parks in a barrier or warp collective; the last thread to arrive releases the others.
//
// A fiber that runs a thread to completion starts the next unstarted thread itself, without
// a switch, so a kernel with no barriers (vector add) runs a whole block as a plain loop on
// one stack. Only a thread that parks keeps its fiber; the next thread then gets a fresh
// one. Scheduling decisions happen on the parking fiber, which switches straight to the
// next fiber to run: one switch per park, no trip through a scheduler context.
#include "fiber.h"
#include "races.h"
#include "worker.h"

#include <cstring>

extern "C" {
__thread const gpubook_thread_view* gpubook_current_thread = nullptr;
}

namespace gpubook::rt {

thread_local Worker* tls_worker = nullptr;

namespace {

void set_current(Worker& w, Thread* t) {
    w.current = t;
    gpubook_current_thread = t ? &t->view : nullptr;
}

void runner_main(void* p);

Fiber* take_free_fiber(Worker& w) {
    if (!w.free_fibers.empty()) {
        Fiber* f = w.free_fibers.back();
        w.free_fibers.pop_back();
        return f;
    }
    auto* f = new Fiber;
    f->stack = stack_allocate();
    // Stagger the stack tops: stacks are equally spaced, so unstaggered tops would all map to
    // the same cache sets and evict each other when a block's fibers take turns.
    f->stack.top -= (w.fibers.size() % 61) * 64;
    f->worker = &w;
    f->sp = fiber_prepare(f->stack.top, runner_main, f);
    w.fibers.push_back(f);
    return f;
}

// After an aborted block, fibers hold half-run kernels: start them all afresh.
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

// Runs whatever should run next, on behalf of `self` (which either parked its thread or
// holds none). Returns when `self` is picked to run again. Inlined: it is the hot path of
// every barrier.
__attribute__((always_inline)) inline void dispatch(Worker& w, Fiber* self) {
    if (w.ready_count) {
        Thread* t = &w.threads[w.ready[w.ready_head]];
        w.ready_head = (w.ready_head + 1) % kMaxBlockThreads;
        w.ready_count--;
        t->state = ThreadState::Running;
        if (t->fiber != self) switch_fiber(w, self, t->fiber);
        return;
    }
    if (w.next_unstarted < w.nthreads) {
        Fiber* f = take_free_fiber(w);
        if (f != self) switch_fiber(w, self, f);
        return;
    }
    if (w.exited == w.nthreads) { // the block is done: back to run_block
        w.current_fiber = nullptr;
        gpubook_fiber_switch(&self->sp, w.main_sp);
        w.current_fiber = self; // resumed by the next block's run_block
        return;
    }
    report_stuck(w);
}

// Every fiber runs this loop: start threads while nothing waits to resume, then hand over.
void runner_main(void* p) {
    auto* self = static_cast<Fiber*>(p);
    Worker& w = *self->worker;
    for (;;) {
        while (w.ready_count == 0 && w.next_unstarted < w.nthreads) {
            Thread& t = w.threads[w.next_unstarted++];
            t.state = ThreadState::Running;
            t.fiber = self;
            set_current(w, &t);
            w.launch->entry(w.launch->args);
            if (w.launch->mode == Mode::Check) races_end_slice(w);
            t.state = ThreadState::Exited;
            w.exited++;
            w.warps[t.linear / kWarpSize].exited |= 1u << (t.linear % kWarpSize);
        }
        set_current(w, nullptr);
        w.free_fibers.push_back(self);
        dispatch(w, self);
    }
}

std::vector<unsigned> threads_in(const Worker& w, ThreadState s) {
    std::vector<unsigned> out;
    for (unsigned i = 0; i < w.nthreads; i++)
        if (w.threads[i].state == s) out.push_back(i);
    return out;
}

// Nothing can run, yet not every thread has exited: explain who waits for whom.
[[noreturn]] void report_stuck(Worker& w) {
    const unsigned* dim = w.launch->block;
    Diagnostic d;
    d.cls = "barrier_divergence";
    // A warp collective that lacks lanes is the most specific explanation: look there first.
    for (unsigned wi = 0; wi < (w.nthreads + kWarpSize - 1) / kWarpSize; wi++) {
        const Warp& wp = w.warps[wi];
        if (!wp.arrived) continue;
        unsigned lane0 = unsigned(__builtin_ctz(wp.arrived));
        const Thread& t0 = w.threads[wi * kWarpSize + lane0];
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
        set_location(d, w, &t0);
        fail_block(w, std::move(d));
    }
    std::vector<unsigned> waiting = threads_in(w, ThreadState::AtBarrier);
    std::vector<unsigned> exited = threads_in(w, ThreadState::Exited);
    const Thread* first = waiting.empty() ? nullptr : &w.threads[waiting[0]];
    d.message = format("barrier divergence: %s wait at __syncthreads(), but %s of the same block already "
                       "returned. Every thread of a block must reach every __syncthreads(); on a GPU this is "
                       "undefined behaviour (it may hang, or skip the barrier and race). Let all threads reach "
                       "the barrier and guard the work (if (i < n) ...) instead of returning early.",
                       describe_threads(waiting, dim).c_str(), describe_threads(exited, dim).c_str());
    if (first) {
        d.pc = first->wait_pc;
        set_location(d, w, first);
    }
    fail_block(w, std::move(d));
}

} // namespace

void set_location(Diagnostic& d, const Worker& w, const Thread* t) {
    d.has_location = true;
    const gpubook_dim3& b = w.block_view.block_idx;
    d.block[0] = b.x; d.block[1] = b.y; d.block[2] = b.z;
    if (t) {
        d.thread[0] = t->view.thread_idx.x;
        d.thread[1] = t->view.thread_idx.y;
        d.thread[2] = t->view.thread_idx.z;
    }
}

void fail_block(Worker& w, Diagnostic d) {
    Launch& l = *w.launch;
    {
        std::lock_guard<std::mutex> lock(l.error_mutex);
        if (!l.failed.load()) {
            l.error = std::move(d);
            l.failed.store(true);
        }
    }
    w.block_aborted = true;
    Fiber* self = w.current_fiber;
    w.current_fiber = nullptr;
    gpubook_fiber_switch(&self->sp, w.main_sp); // never resumed: reset_fibers restarts it
    __builtin_unreachable();
}

void park_current(Worker& w) {
    Thread* me = w.current;
    dispatch(w, w.current_fiber);
    set_current(w, me);
}

void run_block(Worker& w, uint64_t block_linear) {
    Launch& l = *w.launch;
    unsigned b[3];
    linear_to_coords(block_linear, l.grid, b);
    w.block_view.block_idx = gpubook_dim3{b[0], b[1], b[2]};
    w.block_linear = block_linear;
    w.next_unstarted = w.exited = w.at_barrier = 0;
    w.barrier_epoch = 0;
    w.ready_head = w.ready_count = 0;
    for (unsigned i = 0; i < w.nthreads; i++) w.threads[i].state = ThreadState::Unstarted;
    for (unsigned i = 0; i < (w.nthreads + kWarpSize - 1) / kWarpSize; i++) {
        w.warps[i].arrived = w.warps[i].exited = 0;
        w.warps[i].epoch = 0;
    }
    w.shared.begin_block(l.dynamic_shared_bytes);
    if (l.mode == Mode::Check) races_begin_block(w);
    w.block_aborted = false;
    w.in_block = true;

    Fiber* f = take_free_fiber(w);
    w.current_fiber = f;
    gpubook_fiber_switch(&w.main_sp, f->sp); // back when the block is done or failed
    w.in_block = false;
    set_current(w, nullptr);
    w.current_fiber = nullptr;
    if (w.block_aborted) reset_fibers(w);
}

// Per launch: thread coordinates and warp shapes are the same for every block.
void prepare_worker(Worker& w, Launch& l) {
    w.launch = &l;
    w.nthreads = l.threads_per_block;
    w.block_view.block_dim = gpubook_dim3{l.block[0], l.block[1], l.block[2]};
    w.block_view.grid_dim = gpubook_dim3{l.grid[0], l.grid[1], l.grid[2]};
    for (unsigned i = 0; i < w.nthreads; i++) {
        Thread& t = w.threads[i];
        unsigned c[3];
        linear_to_coords(i, l.block, c);
        t.view.thread_idx = gpubook_dim3{c[0], c[1], c[2]};
        t.view.block = &w.block_view;
        t.linear = i;
    }
    for (unsigned i = 0; i < kMaxWarps; i++) {
        unsigned first = i * kWarpSize;
        unsigned n = w.nthreads > first ? w.nthreads - first : 0;
        w.warps[i].exists = n >= 32 ? 0xffffffffu : (1u << n) - 1;
    }
}

} // namespace gpubook::rt
