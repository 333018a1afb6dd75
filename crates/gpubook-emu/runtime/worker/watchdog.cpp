#include "watchdog.h"

#include "arena.h"
#include "launch.h"
#include "modules.h"
#include "signals.h"
#include "worker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <csignal>
#include <thread>

namespace gpubook::rt {

namespace {

using Steady = std::chrono::steady_clock;

std::mutex g_mutex;
uint64_t g_armed_launch = 0; // 0: disarmed
uint64_t g_limit_ms = 0;
Steady::time_point g_deadline;

// What the watchdog saw of the launch while it ran (sampled at every poll), to tell a launch
// that is only slow from one that is stuck: when each worker's `progress` last moved, and the
// blocks done a second or more before the latest sample (for the pace).
struct Seen {
    uint64_t progress = 0;
    Steady::time_point moved;
};
std::vector<Seen> g_seen;
Steady::time_point g_pace_at;
uint64_t g_pace_done = 0, g_pace_prev_done = 0;
Steady::time_point g_pace_prev_at;

void watch_progress(Steady::time_point now) {
    int n = worker_count();
    while (int(g_seen.size()) < n) g_seen.push_back(Seen{worker_at(int(g_seen.size())).progress, now});
    for (int i = 0; i < n; i++) {
        uint64_t p = worker_at(i).progress;
        if (p != g_seen[size_t(i)].progress) g_seen[size_t(i)] = Seen{p, now};
    }
    if (now - g_pace_at >= std::chrono::seconds(1)) {
        g_pace_prev_at = g_pace_at;
        g_pace_prev_done = g_pace_done;
        g_pace_at = now;
        g_pace_done = launch_blocks_done();
    }
}

// Every worker that holds blocks of the launch moved within the last quarter of the limit (at
// most a second): the launch is slow, not stuck. A thread that loops forever, a spin on a value
// nothing writes and a barrier some thread never reaches all leave their worker's `progress`
// still.
bool only_slow(Steady::time_point now) {
    auto window = std::min<Steady::duration>(std::chrono::seconds(1), std::chrono::milliseconds(g_limit_ms) / 4);
    bool any = false;
    for (int i = 0, n = std::min(worker_count(), int(g_seen.size())); i < n; i++) {
        Worker& w = worker_at(i);
        if (!w.launch || w.resident_blocks.load() == 0) continue;
        if (now - g_seen[size_t(i)].moved > window) return false;
        any = true;
    }
    return any;
}

std::string slow_message(const Launch& l, Steady::time_point now) {
    uint64_t done = launch_blocks_done();
    std::string pace;
    double secs = std::chrono::duration<double>(now - g_pace_prev_at).count();
    if (g_pace_prev_at != Steady::time_point{} && done > g_pace_prev_done && secs > 0) {
        double per_s = double(done - g_pace_prev_done) / secs;
        pace = format("; at the pace of its last %.1f s it needed about %.0f s more", secs,
                      double(l.total_blocks - done) / per_s + 0.5);
    }
    const char* why = l.mode == Mode::Check
                          ? "Check mode sends every load and store through its checks and runs one block at a "
                            "time, a hundred times or more slower than the same loop compiled natively."
                          : "Fast mode has no checks; the kernel's work itself takes that long on this CPU.";
    return format("too slow: the launch ran for more than %llu ms, the emulator's watchdog, but it was not stuck: "
                  "its threads were still finishing (%llu of %llu blocks done%s). %s Give it more time "
                  "(GPUBOOK_EMU_WATCHDOG_S, in seconds), a smaller input%s.",
                  (unsigned long long)g_limit_ms, (unsigned long long)done, (unsigned long long)l.total_blocks,
                  pace.c_str(), why,
                  l.mode == Mode::Check ? ", or fast mode (GPUBOOK_EMU_MODE=fast; gpubook run --mode fast)" : "");
}

// Runs on the interrupted worker thread: note where it was, then stay frozen until exit.
void on_sample(int, siginfo_t*, void* uc) {
    Worker* w = tls_worker;
    if (w) {
        w->sampled_pc.store(signal_pc(uc));
        if (w->loop) w->sampled_thread = loop_thread(*w);
        w->sampled.store(true);
    }
    for (;;) pause();
}

// The threads of `b` in state `s`. A block loop (fast mode) does not keep its threads' states
// one by one: those it ran before `looping` have finished, `looping` runs.
std::string thread_list(const Block& b, const Launch& l, ThreadState s, const Worker& w, const Thread* looping) {
    std::vector<unsigned> v;
    for (unsigned i = 0; i < b.nthreads; i++) {
        ThreadState st = b.states[i];
        if (looping && looping->block == &b && i >= w.loop_first && i <= looping->linear)
            st = i < looping->linear ? ThreadState::Exited : ThreadState::Running;
        if (st == s) v.push_back(i);
    }
    return v.empty() ? "" : describe_threads(v, l.block);
}

std::string block_name(const Block& b) {
    unsigned c[3] = {b.view.block_idx.x, b.view.block_idx.y, b.view.block_idx.z};
    return format("block %s", coords(c).c_str());
}

// One note per call site where threads of `b` wait at a barrier or in a warp collective.
void barrier_notes(const Block& b, const Launch& l, Diagnostic& d) {
    std::vector<uintptr_t> sites;
    for (unsigned i = 0; i < b.nthreads; i++) {
        const Thread& x = b.threads[i];
        if (state(x) != ThreadState::AtBarrier && state(x) != ThreadState::AtWarp) continue;
        if (std::find(sites.begin(), sites.end(), x.wait_pc) == sites.end()) sites.push_back(x.wait_pc);
    }
    for (uintptr_t site : sites) {
        std::vector<unsigned> v;
        const char* what = "__syncthreads()";
        for (unsigned i = 0; i < b.nthreads; i++) {
            const Thread& x = b.threads[i];
            if ((state(x) == ThreadState::AtBarrier || state(x) == ThreadState::AtWarp) && x.wait_pc == site) {
                v.push_back(i);
                if (state(x) == ThreadState::AtWarp) what = warp_op_name(x.warp.op);
            }
        }
        Note n;
        n.what = format("%s of %s wait in %s here", describe_threads(v, l.block).c_str(), block_name(b).c_str(), what);
        n.pc = site;
        d.more.push_back(n);
    }
}

// One note per thread that waits for a value that does not change (check mode sees them).
unsigned spin_notes(const Block& b, const Launch& l, Diagnostic& d, unsigned budget) {
    unsigned shown = 0;
    for (unsigned i = 0; i < b.nthreads && shown < budget; i++) {
        const Thread& x = b.threads[i];
        const ThreadChecks& c = *x.chk;
        if (!c.spin_pc || (state(x) != ThreadState::Ready && state(x) != ThreadState::Running)) continue;
        const Buffer* buf = g_arena.find(c.spin_addr, 1);
        std::string what = buf ? describe_element(*buf, c.spin_addr, 4)
                               : format("address %#lx", (unsigned long)c.spin_addr);
        unsigned tc[3] = {view(x).thread_idx.x, view(x).thread_idx.y, view(x).thread_idx.z};
        Note n;
        n.what = format("thread %s of %s keeps reading %s, which does not change", coords(tc).c_str(),
                        block_name(b).c_str(), what.c_str());
        n.pc = c.spin_pc;
        n.has_location = true;
        std::memcpy(n.thread, tc, sizeof tc);
        n.block[0] = b.view.block_idx.x; n.block[1] = b.view.block_idx.y; n.block[2] = b.view.block_idx.z;
        d.more.push_back(n);
        shown++;
    }
    (void)l;
    return shown;
}

// Describes a frozen worker that is in the middle of a launch.
void describe(Worker& w, Diagnostic& d, bool first, bool expired) {
    const Launch& l = *w.launch;
    uintptr_t pc = w.sampled_pc.load();
    if (!in_kernel_module(pc)) pc = w.last_access_pc; // interrupted inside a runtime hook or libc
    // In a block loop the sampled thread is the one running (w.current, if set, is the last one
    // that called the worker, in check mode; its checks are the loop's, not its own).
    const bool in_loop = w.loop && w.sampled_thread;
    const Thread* t = in_loop ? w.sampled_thread : w.current;
    const Block* running = t ? t->block : nullptr;
    unsigned spinners = 0;
    for (const Block* b : w.resident) spinners += spin_notes(*b, l, d, 8 - std::min(8u, spinners));
    for (const Block* b : w.resident) barrier_notes(*b, l, d);
    if (!first) {
        if (t) {
            unsigned tc[3] = {view(*t).thread_idx.x, view(*t).thread_idx.y, view(*t).thread_idx.z};
            Note n;
            n.what = format("OS thread %d is also running thread %s of %s", w.index, coords(tc).c_str(),
                            block_name(*running).c_str());
            n.pc = pc;
            d.more.push_back(n);
        }
        return;
    }
    std::string limit = expired ? format("the launch ran for more than %llu ms", (unsigned long long)g_limit_ms)
                                : std::string("the launch did not finish in time");
    uint64_t holds = l.resident_limit.load(), started = launch_blocks_done() + launch_resident();
    std::string blocks;
    if (l.total_blocks > 1)
        blocks = format(" The grid has %llu blocks; %llu had started (the device holds %llu at once), %llu had "
                        "finished.",
                        (unsigned long long)l.total_blocks, (unsigned long long)started, (unsigned long long)holds,
                        (unsigned long long)launch_blocks_done());
    if (t && (in_loop || !t->chk->spin_pc)) {
        unsigned tc[3] = {view(*t).thread_idx.x, view(*t).thread_idx.y, view(*t).thread_idx.z};
        std::string others;
        auto add = [&](ThreadState s, const char* what) {
            std::string list = thread_list(*running, l, s, w, in_loop ? w.sampled_thread : nullptr);
            if (!list.empty()) others += (others.empty() ? "" : "; ") + list + what;
        };
        add(ThreadState::AtBarrier, " wait at __syncthreads()");
        add(ThreadState::AtWarp, " wait in a warp function");
        add(ThreadState::Unstarted, " have not started");
        add(ThreadState::Exited, " have finished");
        d.message = format("hang: %s. Thread %s of %s has been running without finishing or reaching a barrier: "
                           "a loop that never ends, or one that waits for a value nothing writes? (Such a wait "
                           "must read the value with a volatile or atomic load: a plain load may be read once and "
                           "kept in a register, on a GPU too.)%s%s%s",
                           limit.c_str(), coords(tc).c_str(), block_name(*running).c_str(), blocks.c_str(),
                           others.empty() ? "" : " Other threads of the block: ", others.c_str());
        d.pc = pc;
        if (pc != w.last_access_pc) d.fallback_pc = w.last_access_pc;
        set_location(d, *running, t);
    } else {
        bool past = l.total_blocks > holds;
        d.message = format("hang: %s, and every thread still running waits for a value that nothing changes "
                           "(the notes say which).%s%s",
                           limit.c_str(), blocks.c_str(),
                           past ? " The blocks that would write it may be ones the device cannot run at the "
                                  "same time as those waiting: launch no more blocks than it holds at once."
                                : "");
        if (!d.more.empty()) {
            d.pc = d.more[0].pc;
            if (d.more[0].has_location) {
                d.has_location = true;
                std::memcpy(d.block, d.more[0].block, sizeof d.block);
                std::memcpy(d.thread, d.more[0].thread, sizeof d.thread);
            }
        }
    }
}

// `expired`: our own limit passed (else the host asked), noticed at `now`.
[[noreturn]] void report_hang(bool expired, Steady::time_point now) {
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
    Launch* active = g_active_launch.load();
    if (expired && active && only_slow(now)) {
        d.cls = "too_slow";
        d.message = slow_message(*active, now);
        static Json j;
        write_failure(j, d);
        report_and_exit(j.c_str(), 71);
    }
    d.cls = "hang";
    bool first = true;
    for (int i = 0; i < n; i++) {
        Worker& w = worker_at(i);
        if (!w.launch || w.resident.empty()) continue;
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
        auto now = Steady::now();
        if (g_armed_launch) watch_progress(now);
        bool expired = g_armed_launch && now >= g_deadline;
        if ((asked && g_active_launch.load()) || expired) report_hang(expired, now);
        launch_poll();
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
    auto now = Steady::now();
    g_deadline = now + std::chrono::milliseconds(limit_ms);
    g_seen.clear();
    g_pace_at = now;
    g_pace_done = launch_blocks_done();
    g_pace_prev_at = Steady::time_point{};
    watch_progress(now);
}

void watchdog_disarm() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed_launch = 0;
}

} // namespace gpubook::rt
