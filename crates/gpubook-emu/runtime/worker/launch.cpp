#include "launch.h"

#include "modules.h"
#include "access/checks.h"
#include "access/races.h"
#include "signals.h"
#include "access/unwritten.h"
#include "watchdog.h"
#include "worker.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace gpubook::rt {

std::atomic<Launch*> g_active_launch{nullptr};
DeviceShape g_device;

namespace {

uint64_t g_timeout_ms = 60000;
constexpr int kMaxWorkers = 256;
std::unique_ptr<Worker> g_workers[kMaxWorkers];
std::atomic<int> g_worker_count{0};
std::mutex g_workers_mutex;
uint64_t g_launch_counter = 0;
std::string g_writers_path; // WRITERS: for the next launch only

// Fast mode's OS threads beyond the first, which launch_poll may add to while a launch runs.
struct Helpers {
    std::mutex mutex;
    std::vector<std::thread> threads;
    bool closed = true;
    int next_index = 1;
    unsigned limit = 1;
    uint64_t last_done = 0;
    std::chrono::steady_clock::time_point last_change;
} g_helpers;
// How long fast mode waits without a finished block before adding an OS thread.
constexpr auto kStallBeforeGrowing = std::chrono::milliseconds(50);

// GPU limits (compute capability 5.0 and later).
constexpr unsigned kMaxBlockDim[3] = {1024, 1024, 64};
constexpr uint64_t kMaxGridDim[3] = {2147483647ull, 65535, 65535};

// A GPU's answer to a bad launch configuration, or "".
std::string config_error(const LaunchRequest& r) {
    const char* axis = "xyz";
    for (int i = 0; i < 3; i++) {
        if (r.grid[i] == 0 || r.block[i] == 0)
            return format("the launch has a zero dimension: grid_dim (%u,%u,%u), block_dim (%u,%u,%u). Every "
                          "dimension must be at least 1 (for n elements, grid_dim.x = ceil(n / block_dim.x) is 0 "
                          "when n is 0: skip the launch instead).",
                          r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2]);
    }
    uint64_t per_block = uint64_t(r.block[0]) * r.block[1] * r.block[2];
    if (per_block > kMaxBlockThreads)
        return format("block_dim (%u,%u,%u) has %llu threads per block; a GPU allows at most %u.", r.block[0],
                      r.block[1], r.block[2], (unsigned long long)per_block, kMaxBlockThreads);
    for (int i = 0; i < 3; i++) {
        if (r.block[i] > kMaxBlockDim[i])
            return format("block_dim.%c = %u is over the GPU's limit of %u.", axis[i], r.block[i], kMaxBlockDim[i]);
        if (r.grid[i] > kMaxGridDim[i])
            return format("grid_dim.%c = %u is over the GPU's limit of %llu.", axis[i], r.grid[i],
                          (unsigned long long)kMaxGridDim[i]);
    }
    if (r.dynamic_shared_bytes > kSharedMemoryOptInLimit)
        return format("shared_mem_bytes = %llu is over the %zu bytes of shared memory any GPU gives a block.",
                      (unsigned long long)r.dynamic_shared_bytes, kSharedMemoryOptInLimit);
    return "";
}

// Blocks of this shape the emulated device holds at once: per SM, as many as its threads,
// its block slots and its shared memory allow.
uint64_t resident_limit(unsigned threads_per_block, size_t shared_per_block) {
    unsigned warps = (threads_per_block + kWarpSize - 1) / kWarpSize;
    uint64_t per_sm = std::min<uint64_t>(g_device.blocks_per_sm, g_device.threads_per_sm / (warps * kWarpSize));
    if (shared_per_block) per_sm = std::min<uint64_t>(per_sm, g_device.shared_per_sm / shared_per_block);
    return std::max<uint64_t>(1, per_sm * g_device.sms);
}

// GPUBOOK_EMU_BLOCK_LOOP=0 runs fast mode's threads on fibers one by one, as before the block
// loop existed: for measuring what the loop gains (docs/measurements.md).
bool block_loops_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("GPUBOOK_EMU_BLOCK_LOOP");
        return !v || std::strcmp(v, "0") != 0;
    }();
    return enabled;
}

void fail_reply(Json& reply, const char* cls, std::string message) {
    Diagnostic d;
    d.cls = cls;
    d.message = std::move(message);
    write_failure(reply, d);
}

void work(Worker& w, Launch& l) {
    tls_worker = &w;
    w.os_thread = pthread_self();
    run_blocks(w, l);
    tls_worker = nullptr;
}

// Under g_helpers.mutex.
void spawn_helper(Launch& l) {
    int i = g_helpers.next_index++;
    worker_at(i); // created before the thread (and the watchdog) look at it
    g_helpers.threads.emplace_back([&l, i] {
        Worker& w = worker_at(i);
        install_signal_stack(w);
        work(w, l);
    });
}

} // namespace

Worker& worker_at(int index) {
    std::lock_guard<std::mutex> lock(g_workers_mutex);
    while (g_worker_count.load() <= index) {
        int i = g_worker_count.load();
        g_workers[i] = std::make_unique<Worker>();
        g_workers[i]->index = i;
        g_worker_count.store(i + 1);
    }
    return *g_workers[index];
}

int worker_count() { return g_worker_count.load(); }

namespace {
uint64_t sum_workers(std::atomic<uint64_t> Worker::*field) {
    uint64_t sum = 0;
    for (int i = 0, n = g_worker_count.load(); i < n; i++) sum += ((*g_workers[i]).*field).load(std::memory_order_relaxed);
    return sum;
}
} // namespace

uint64_t launch_resident() { return sum_workers(&Worker::resident_blocks); }
uint64_t launch_blocks_done() { return sum_workers(&Worker::finished_blocks); }

void set_launch_timeout_ms(uint64_t ms) { g_timeout_ms = ms; }

void set_writers_path(std::string path) { g_writers_path = std::move(path); }

void launch_poll() {
    Launch* l = g_active_launch.load();
    if (!l || l->mode != Mode::Fast) return;
    std::lock_guard<std::mutex> lock(g_helpers.mutex);
    if (g_helpers.closed) return;
    auto now = std::chrono::steady_clock::now();
    uint64_t done = launch_blocks_done();
    if (done != g_helpers.last_done) {
        g_helpers.last_done = done;
        g_helpers.last_change = now;
        return;
    }
    // Only a grid the device holds at once can rely on its blocks running together.
    bool coresident = l->total_blocks <= l->resident_limit.load();
    if (!coresident || now - g_helpers.last_change < kStallBeforeGrowing) return;
    if (l->next_block.load() >= l->total_blocks || l->failed.load()) return;
    if (unsigned(g_helpers.next_index) >= g_helpers.limit) return;
    spawn_helper(*l);
    g_helpers.last_change = now;
}

namespace {
// The checks a check-mode launch could not make, for the reply (the host warns): their
// shadow's address space was refused (shadow_space.h).
std::string unchecked_checks() {
    std::string what = races_unchecked();
    if (unwritten_refused())
        what += std::string(what.empty() ? "" : "; ") +
                "reads of never-written memory (the worker could not reserve address space for their bitmap)";
    return what;
}
} // namespace

void run_launch(const LaunchRequest& req, Json& reply) {
    std::string writers_path; // asked for this launch only, whatever happens to it
    writers_path.swap(g_writers_path);
    Module* m = find_module(req.module);
    if (!m) return fail_reply(reply, "bad_module", format("no module '%s' was loaded", req.module.c_str()));
    int arity = -1;
    KernelEntry entry = find_kernel(*m, req.kernel, &arity);
    if (!entry)
        return fail_reply(reply, "bad_module",
                          format("module '%s' has no kernel '%s' (is it declared extern \"C\" __global__?)",
                                 req.module.c_str(), req.kernel.c_str()));
    if (arity >= 0 && size_t(arity) != req.args.size())
        return fail_reply(reply, "launch_config",
                          format("kernel '%s' takes %d parameters but the launch passed %zu arguments.",
                                 req.kernel.c_str(), arity, req.args.size()));
    std::string bad = config_error(req);
    if (!bad.empty()) return fail_reply(reply, "launch_config", bad);

    // Arguments as cuLaunchKernel takes them: one pointer per parameter, each 16-aligned.
    std::vector<std::unique_ptr<uint64_t[]>> storage;
    std::vector<void*> args;
    for (const auto& a : req.args) {
        storage.emplace_back(new uint64_t[(a.size() + 15) / 8 + 2]());
        std::memcpy(storage.back().get(), a.data(), a.size());
        args.push_back(storage.back().get());
    }

    Launch l;
    l.id = ++g_launch_counter;
    l.entry = entry;
    // Check-mode modules have a block loop only when built with the compiler pass.
    if (block_loops_enabled()) l.loop_entry = find_block_loop(*m, req.kernel);
    l.args = args.data();
    l.module_base = m->base;
    std::memcpy(l.grid, req.grid, sizeof l.grid);
    std::memcpy(l.block, req.block, sizeof l.block);
    l.dynamic_shared_bytes = req.dynamic_shared_bytes;
    l.mode = req.check ? Mode::Check : Mode::Fast;
    l.total_blocks = uint64_t(l.grid[0]) * l.grid[1] * l.grid[2];
    l.threads_per_block = l.block[0] * l.block[1] * l.block[2];
    l.resident_limit.store(resident_limit(l.threads_per_block, l.dynamic_shared_bytes));

    auto start = std::chrono::steady_clock::now();
    g_access_checks_off = req.engine_only;
    if (l.mode == Mode::Check) {
        races_begin_launch(l);
        counts_begin_launch(l);
        if (req.engine_only) unwritten_forget_all(); // its stores go unseen, as fast mode's
    } else {
        unwritten_forget_all(); // fast mode's stores are invisible: stop tracking
    }
    unsigned nthreads = 1;
    if (l.mode == Mode::Fast) {
        nthreads = req.threads ? req.threads : std::max(1u, std::thread::hardware_concurrency());
        if (nthreads > l.total_blocks) nthreads = unsigned(l.total_blocks);
        if (nthreads > unsigned(kMaxWorkers)) nthreads = kMaxWorkers;
    }
    if (l.mode == Mode::Fast && l.total_blocks > l.resident_limit.load())
        l.claim_batch = std::clamp<uint64_t>(l.total_blocks / (uint64_t(nthreads) * 16), 1, 64);
    for (unsigned i = 0; i < nthreads; i++) worker_at(int(i)); // create before threads (and the watchdog) look
    for (int i = 0; i < worker_count(); i++) {
        worker_at(i).resident_blocks.store(0);
        worker_at(i).finished_blocks.store(0);
    }
    {
        std::lock_guard<std::mutex> lock(g_helpers.mutex);
        g_helpers.closed = false;
        g_helpers.next_index = 1;
        g_helpers.limit = unsigned(std::min<uint64_t>(kMaxWorkers, std::max<uint64_t>(nthreads, l.total_blocks)));
        g_helpers.last_done = 0;
        g_helpers.last_change = start;
        for (unsigned i = 1; i < nthreads; i++) spawn_helper(l);
    }
    g_active_launch.store(&l);
    watchdog_arm(l.id, g_timeout_ms);
    work(worker_at(0), l);
    for (;;) { // join the helpers, including any launch_poll adds meanwhile
        std::thread t;
        {
            std::lock_guard<std::mutex> lock(g_helpers.mutex);
            if (g_helpers.threads.empty()) {
                g_helpers.closed = true;
                break;
            }
            t = std::move(g_helpers.threads.back());
            g_helpers.threads.pop_back();
        }
        t.join();
    }
    watchdog_disarm();
    g_active_launch.store(nullptr);
    g_access_checks_off = false;
    bool writers = false;
    if (l.mode == Mode::Check && !l.failed.load() && !writers_path.empty())
        writers = races_write_writers(l, writers_path.c_str());
    std::string unchecked = l.mode == Mode::Check && !req.engine_only ? unchecked_checks() : "";
    if (l.mode == Mode::Check) races_end_launch();
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    std::fflush(stdout); // kernel printf output before the reply

    if (l.failed.load()) {
        write_failure(reply, l.error);
    } else {
        reply.begin_object().boolean("ok", true).num("ns", ns);
        if (l.mode == Mode::Check) counts_write(reply, l.counts);
        if (writers) reply.boolean("writers", true);
        if (!unchecked.empty()) reply.str("unchecked", unchecked.c_str());
        reply.end_object();
    }
}

} // namespace gpubook::rt
