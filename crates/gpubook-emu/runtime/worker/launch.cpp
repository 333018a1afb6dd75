#include "launch.h"

#include "modules.h"
#include "races.h"
#include "signals.h"
#include "unwritten.h"
#include "watchdog.h"
#include "worker.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

namespace gpubook::rt {

std::atomic<Launch*> g_active_launch{nullptr};

namespace {

uint64_t g_timeout_ms = 60000;
std::vector<std::unique_ptr<Worker>> g_workers;
uint64_t g_launch_counter = 0;

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
    if (r.dynamic_shared_bytes > kSharedMemoryLimit)
        return format("shared_mem_bytes = %llu is over the %zu bytes of shared memory a block may use without "
                      "opting in.",
                      (unsigned long long)r.dynamic_shared_bytes, kSharedMemoryLimit);
    return "";
}

void fail_reply(Json& reply, const char* cls, std::string message) {
    Diagnostic d;
    d.cls = cls;
    d.message = std::move(message);
    write_failure(reply, d);
}

// Runs blocks until there are none left or the launch failed.
void work(Worker& w, Launch& l) {
    tls_worker = &w;
    w.os_thread = pthread_self();
    prepare_worker(w, l);
    for (;;) {
        if (l.failed.load(std::memory_order_relaxed)) break;
        uint64_t b = l.next_block.fetch_add(1, std::memory_order_relaxed);
        if (b >= l.total_blocks) break;
        run_block(w, b);
    }
    w.launch = nullptr;
    tls_worker = nullptr;
}

} // namespace

Worker& worker_at(int index) {
    while (int(g_workers.size()) <= index) {
        auto w = std::make_unique<Worker>();
        w->index = int(g_workers.size());
        w->shared.init();
        g_workers.push_back(std::move(w));
    }
    return *g_workers[size_t(index)];
}

int worker_count() { return int(g_workers.size()); }

void set_launch_timeout_ms(uint64_t ms) { g_timeout_ms = ms; }

void run_launch(const LaunchRequest& req, Json& reply) {
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
    l.args = args.data();
    l.module_base = m->base;
    std::memcpy(l.grid, req.grid, sizeof l.grid);
    std::memcpy(l.block, req.block, sizeof l.block);
    l.dynamic_shared_bytes = req.dynamic_shared_bytes;
    l.mode = req.check ? Mode::Check : Mode::Fast;
    l.total_blocks = uint64_t(l.grid[0]) * l.grid[1] * l.grid[2];
    l.threads_per_block = l.block[0] * l.block[1] * l.block[2];

    auto start = std::chrono::steady_clock::now();
    if (l.mode == Mode::Check) races_begin_launch(l);
    else unwritten_forget_all(); // fast mode's stores are invisible: stop tracking
    unsigned nthreads = 1;
    if (l.mode == Mode::Fast) {
        nthreads = req.threads ? req.threads : std::max(1u, std::thread::hardware_concurrency());
        if (nthreads > l.total_blocks) nthreads = unsigned(l.total_blocks);
        if (nthreads > 256) nthreads = 256;
    }
    for (unsigned i = 0; i < nthreads; i++) worker_at(int(i)); // create before threads (and the watchdog) look
    g_active_launch.store(&l);
    watchdog_arm(l.id, g_timeout_ms);
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < nthreads; i++)
        helpers.emplace_back([&l, i] {
            Worker& w = worker_at(int(i));
            install_signal_stack(w);
            work(w, l);
        });
    work(worker_at(0), l);
    for (auto& t : helpers) t.join();
    watchdog_disarm();
    g_active_launch.store(nullptr);
    if (l.mode == Mode::Check) races_end_launch();
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    std::fflush(stdout); // kernel printf output before the reply

    if (l.failed.load()) {
        write_failure(reply, l.error);
    } else {
        reply.begin_object().boolean("ok", true).num("ns", ns).end_object();
    }
}

} // namespace gpubook::rt
