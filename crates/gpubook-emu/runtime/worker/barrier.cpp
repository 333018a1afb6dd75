// __syncthreads and its _count/_and/_or variants, and __threadfence.
#include "access/checks.h"
#include "access/races.h"
#include "worker.h"

#include <cstring>

namespace gpubook::rt {

namespace {

// Check mode: all threads must wait at the same __syncthreads() (the same source line).
__attribute__((noinline)) void check_same_call_site(Worker& w, Block& b) {
    if (!b.barrier_mixed) return; // each arrival compared its line with the first's
    const unsigned* dim = w.launch->block;
    uintptr_t pc0 = 0;
    int line0 = 0;
    std::vector<unsigned> here, elsewhere;
    uintptr_t other_pc = 0;
    for (unsigned i = 0; i < b.nthreads; i++) {
        const Thread& t = b.threads[i];
        if (!pc0) {
            pc0 = t.wait_pc;
            line0 = t.wait_line;
        }
        if (t.wait_line == line0) here.push_back(i);
        else {
            if (!other_pc) other_pc = t.wait_pc;
            elsewhere.push_back(i);
        }
    }
    if (elsewhere.empty()) return;
    Diagnostic d;
    d.cls = "barrier_divergence";
    d.message = format("barrier divergence: %s wait at one __syncthreads() and %s at another. All threads of "
                       "a block must reach the same __syncthreads(); one inside an if/else whose condition "
                       "differs between threads is the usual cause.",
                       describe_threads(here, dim).c_str(), describe_threads(elsewhere, dim).c_str());
    d.pc = pc0;
    set_location(d, b, &b.threads[here[0]]);
    Note n;
    n.what = format("%s wait here", describe_threads(elsewhere, dim).c_str());
    n.pc = other_pc;
    n.has_location = true;
    d.more.push_back(n);
    fail_block(w, std::move(d));
}

// Once per barrier, out of line: gpubook_rt_syncthreads, which every thread calls, stays small.
__attribute__((noinline)) void release_barrier(Worker& w, Block& b) {
    Launch& l = *w.launch;
    if (l.mode == Mode::Check) {
        check_same_call_site(w, b);
        if (b.shared.unwritten_read()) report_unwritten_read(w, b);
        counts_converged(l, b, -1);
        races_barrier(b);
    }
    b.barrier_mixed = false;
    int result = 0;
    switch (b.barrier_kind) {
    case GPUBOOK_BAR_COUNT:
        for (unsigned i = 0; i < b.nthreads; i++) result += b.threads[i].barrier_pred != 0;
        break;
    case GPUBOOK_BAR_AND:
        result = 1;
        for (unsigned i = 0; i < b.nthreads; i++) result &= b.threads[i].barrier_pred != 0;
        break;
    case GPUBOOK_BAR_OR:
        for (unsigned i = 0; i < b.nthreads; i++) result |= b.threads[i].barrier_pred != 0;
        break;
    default: break;
    }
    b.at_barrier = 0;
    b.parked -= b.nthreads;
    b.barrier_epoch++;
    b.idle_spins = 0;
    w.progress++;
    // A plain __syncthreads() returns nothing: only the _count/_and/_or variants need a result.
    if (b.barrier_kind != GPUBOOK_BAR_SYNC)
        for (unsigned i = 0; i < b.nthreads; i++) b.threads[i].barrier_result = result;
    if (b.ready_count == 0) { // every thread waited here: all ready, in order
        std::memset(b.states, int(ThreadState::Ready), b.nthreads);
        for (unsigned i = 0; i < b.nthreads; i++) b.ready[i] = i;
        b.ready_head = 0;
        b.ready_count = b.nthreads;
    } else {
        for (unsigned i = 0; i < b.nthreads; i++) make_ready(b, b.threads[i]);
    }
}

} // namespace

} // namespace gpubook::rt

using namespace gpubook::rt;

extern "C" int gpubook_rt_syncthreads(int kind, int pred, int line) {
    Worker& w = *tls_worker;
    loop_break(w);
    Block& b = *w.blk;
    Thread& t = *w.current;
    if (b.at_barrier == 0) {
        b.barrier_kind = kind;
        b.barrier_line = line;
    } else if (line != b.barrier_line) {
        b.barrier_mixed = true;
    }
    state(t) = ThreadState::AtBarrier;
    t.wait_pc = call_site(__builtin_return_address(0));
    t.wait_line = line;
    t.barrier_pred = pred;
    if (w.launch->mode == Mode::Check) t.chk->counts.barriers++;
    b.at_barrier++;
    b.parked++;
    if (b.next_unstarted == b.nthreads && b.at_barrier == b.nthreads) release_barrier(w, b);
    park_current(w);
    return t.barrier_result;
}

extern "C" void gpubook_rt_threadfence(void) {
    Worker* w = tls_worker;
    if (!w || !w->blk || !w->launch) return;
    loop_break(*w);
    if (w->launch->mode == Mode::Check) races_fence(*w);
}

extern "C" void gpubook_rt_threadfence_block(void) {
    Worker* w = tls_worker;
    if (!w || !w->blk || !w->launch) return;
    loop_break(*w);
    if (w->launch->mode == Mode::Check) races_fence_block(*w);
}

// __nanosleep(): the thread is waiting for something; let the others run. In check mode the
// volatile or atomic read it waits on already counts as waiting (spin.cpp); fast mode sees no
// reads, so the sleep itself counts.
extern "C" void gpubook_rt_nanosleep(unsigned) {
    Worker* w = tls_worker;
    if (w) loop_break(*w);
    if (w && w->blk && w->current) yield_current(*w, w->launch->mode == Mode::Fast);
}
