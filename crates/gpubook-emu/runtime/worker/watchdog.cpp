#include "watchdog.h"

#include "modules.h"
#include "signals.h"
#include "worker.h"

#include <chrono>
#include <csignal>
#include <thread>

namespace gpubook::rt {

namespace {

std::mutex g_mutex;
uint64_t g_armed_launch = 0; // 0: disarmed
uint64_t g_limit_ms = 0;
std::chrono::steady_clock::time_point g_deadline;

// Runs on the interrupted worker thread: note where it was, then stay frozen until exit.
void on_sample(int, siginfo_t*, void* uc) {
    Worker* w = tls_worker;
    if (w) {
        w->sampled_pc.store(signal_pc(uc));
        w->sampled.store(true);
    }
    for (;;) pause();
}

std::string thread_list(const Worker& w, ThreadState s) {
    std::vector<unsigned> v;
    for (unsigned i = 0; i < w.nthreads; i++)
        if (w.threads[i].state == s) v.push_back(i);
    return v.empty() ? "" : describe_threads(v, w.launch->block);
}

// Describes a frozen worker that is in the middle of a block.
void describe(Worker& w, Diagnostic& d, bool first, bool expired) {
    uintptr_t pc = w.sampled_pc.load();
    if (!in_kernel_module(pc)) pc = w.last_access_pc; // interrupted inside a runtime hook or libc
    const Thread* t = w.current;
    unsigned b[3] = {w.block_view.block_idx.x, w.block_view.block_idx.y, w.block_view.block_idx.z};
    std::string who = t ? format("thread (%u,%u,%u) of block %s", t->view.thread_idx.x, t->view.thread_idx.y,
                                 t->view.thread_idx.z, coords(b).c_str())
                        : format("block %s", coords(b).c_str());
    std::string others;
    auto add = [&](ThreadState s, const char* what) {
        std::string l = thread_list(w, s);
        if (!l.empty()) others += (others.empty() ? "" : "; ") + l + what;
    };
    add(ThreadState::AtBarrier, " wait at __syncthreads()");
    add(ThreadState::AtWarp, " wait in a warp function");
    add(ThreadState::Unstarted, " have not started");
    add(ThreadState::Exited, " have finished");
    // Where the waiting threads wait, one note per call site.
    std::vector<uintptr_t> sites;
    for (unsigned i = 0; i < w.nthreads; i++) {
        const Thread& x = w.threads[i];
        if (x.state != ThreadState::AtBarrier && x.state != ThreadState::AtWarp) continue;
        bool seen = false;
        for (uintptr_t s : sites) seen |= s == x.wait_pc;
        if (!seen) sites.push_back(x.wait_pc);
    }
    for (uintptr_t site : sites) {
        std::vector<unsigned> v;
        const char* what = "__syncthreads()";
        for (unsigned i = 0; i < w.nthreads; i++) {
            const Thread& x = w.threads[i];
            if ((x.state == ThreadState::AtBarrier || x.state == ThreadState::AtWarp) && x.wait_pc == site) {
                v.push_back(i);
                if (x.state == ThreadState::AtWarp) what = warp_op_name(x.warp.op);
            }
        }
        Note n;
        n.what = format("%s of block %s wait in %s here", describe_threads(v, w.launch->block).c_str(),
                        coords(b).c_str(), what);
        n.pc = site;
        d.more.push_back(n);
    }
    if (first) {
        std::string limit = expired ? format("the launch ran for more than %llu ms", (unsigned long long)g_limit_ms)
                                    : std::string("the launch did not finish in time");
        d.message = format("hang: %s. %s has been running without finishing or "
                           "reaching a barrier: a loop that never ends? A loop waiting for a value that another "
                           "thread or block has yet to write can wait forever: threads of a block only make "
                           "progress past a barrier, and a GPU does not promise that blocks run at the same time "
                           "(check mode runs them one after another).%s%s",
                           limit.c_str(), who.c_str(),
                           others.empty() ? "" : " Other threads of the block: ", others.c_str());
        d.pc = pc;
        set_location(d, w, t);
    } else {
        Note n;
        n.what = format("OS thread %d is also running %s", w.index, who.c_str());
        n.pc = pc;
        d.more.push_back(n);
    }
}

// `expired`: our own limit passed (else the host asked).
[[noreturn]] void report_hang(bool expired) {
    int n = worker_count();
    for (int i = 0; i < n; i++) {
        Worker& w = worker_at(i);
        if (w.launch) pthread_kill(w.os_thread, SIGUSR2);
    }
    // Give the interrupted threads a moment to record where they are.
    for (int spin = 0; spin < 50; spin++) {
        bool all = true;
        for (int i = 0; i < n; i++) {
            Worker& w = worker_at(i);
            if (w.launch && !w.sampled.load()) all = false;
        }
        if (all) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Diagnostic d;
    d.cls = "hang";
    bool first = true;
    for (int i = 0; i < n; i++) {
        Worker& w = worker_at(i);
        if (!w.launch || !w.in_block) continue;
        describe(w, d, first, expired);
        first = false;
    }
    if (first) d.message = "hang: the launch did not finish in time.";
    static Json j;
    write_failure(j, d);
    report_and_exit(j.c_str(), 71);
}

// Polls: the launch's deadline, and SIGUSR1, which the host sends when its own watchdog
// fires (DESIGN.md, "Change (host)" 6). Every other thread blocks SIGUSR1, so it arrives here.
void watchdog_main() {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (;;) {
        timespec poll{0, 20 * 1000 * 1000};
        bool asked = sigtimedwait(&usr1, nullptr, &poll) == SIGUSR1;
        std::lock_guard<std::mutex> lock(g_mutex);
        bool expired = g_armed_launch && std::chrono::steady_clock::now() >= g_deadline;
        if ((asked && g_active_launch.load()) || expired) report_hang(expired);
    }
}

} // namespace

void watchdog_start() {
    struct sigaction sa {};
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, nullptr);
    // Block SIGUSR1 before any thread starts, so all inherit the mask and only
    // watchdog_main's sigtimedwait receives it.
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    std::thread(watchdog_main).detach();
}

void watchdog_arm(uint64_t launch_id, uint64_t limit_ms) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!limit_ms) return;
    g_armed_launch = launch_id;
    g_limit_ms = limit_ms;
    g_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
}

void watchdog_disarm() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed_launch = 0;
}

} // namespace gpubook::rt
