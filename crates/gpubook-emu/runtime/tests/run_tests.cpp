// The worker's standalone tests: correct kernels give correct results in both modes, and
// each bug class comes back as the right diagnostic. Prints one line per test.
#include "host.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unistd.h>

namespace {

std::string g_worker, g_so_dir;
int g_failed = 0;

std::string so(const char* name, const char* mode) { return g_so_dir + "/" + name + "." + mode + ".so"; }

void expect(bool ok, const char* test, const std::string& detail) {
    // Details: for failures, and for the diagnostics tests (to show what a learner reads).
    bool show = !detail.empty() && (!ok || detail.find("\"ok\":false") != std::string::npos);
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", test, show ? "\n     " : "", show ? detail.c_str() : "");
    if (!ok) g_failed++;
}

// A bug kernel must come back with `cls` and a message containing `needle`.
void expect_diag(const char* test, const Reply& r, const char* cls, const char* needle) {
    bool ok = !r.ok() && r.cls() == cls && r.has(needle);
    expect(ok, test, r.json);
}

void test_vector_add(const char* mode, int n) {
    Worker w(g_worker);
    float* a = w.alloc<float>(size_t(n), "a");
    float* b = w.alloc<float>(size_t(n), "b");
    float* c = w.alloc<float>(size_t(n), "c");
    for (int i = 0; i < n; i++) { a[i] = float(i); b[i] = 2.0f * float(i); }
    w.load("m", so("basics", mode));
    unsigned blocks = unsigned((n + 255) / 256);
    Reply r = w.launch("m", "vector_add", blocks, 256, {arg(a), arg(b), arg(c), arg(n)}, mode);
    bool ok = r.ok();
    for (int i = 0; i < n && ok; i++) ok = c[i] == 3.0f * float(i);
    char name[64];
    std::snprintf(name, sizeof name, "vector_add %s n=%d", mode, n);
    expect(ok, name, r.ok() ? "" : r.json);
}

void test_reduce(const char* mode, const char* kernel, int n, size_t dyn) {
    Worker w(g_worker);
    unsigned blocks = unsigned((n + 255) / 256);
    float* in = w.alloc<float>(size_t(n), "in");
    float* partial = w.alloc<float>(blocks, "partial");
    double expect_sum = 0;
    for (int i = 0; i < n; i++) { in[i] = float(i % 7); expect_sum += i % 7; }
    w.load("m", so("basics", mode));
    Reply r = w.launch("m", kernel, blocks, 256, {arg(in), arg(partial), arg(n)}, mode, 2, dyn);
    double sum = 0;
    for (unsigned b = 0; b < blocks; b++) sum += partial[b];
    char name[96];
    std::snprintf(name, sizeof name, "%s %s n=%d", kernel, mode, n);
    expect(r.ok() && sum == expect_sum, name, r.json);
}

void test_warp_reduce(const char* mode, int n) {
    Worker w(g_worker);
    float* in = w.alloc<float>(size_t(n), "in");
    float* out = w.alloc<float>(1, "out", 0);
    double expect_sum = 0;
    for (int i = 0; i < n; i++) { in[i] = float(i % 5); expect_sum += i % 5; }
    w.load("m", so("basics", mode));
    Reply r = w.launch("m", "reduce_warp", unsigned((n + 255) / 256), 256, {arg(in), arg(out), arg(n)}, mode);
    char name[64];
    std::snprintf(name, sizeof name, "reduce_warp %s n=%d", mode, n);
    expect(r.ok() && *out == float(expect_sum), name, r.json + " sum=" + std::to_string(*out));
}

void test_misc(const char* mode) {
    Worker w(g_worker);
    int* out = w.alloc<int>(8, "out", 0);
    w.load("m", so("basics", mode));
    Reply r = w.launch("m", "misc", 2, 64, {arg(out)}, mode);
    bool ok = r.ok() && out[0] == 0x55555555 && out[1] == 496 && out[2] == 10 && out[3] == 128 && out[4] == 63 &&
              out[5] == 5 + 4 + 3 + 1;
    std::string printed = w.printed();
    ok = ok && printed.find("hello from block 0, 64 threads") != std::string::npos &&
         printed.find("hello from block 1, 64 threads") != std::string::npos;
    char detail[256];
    std::snprintf(detail, sizeof detail, "%s out=%x,%d,%d,%d,%d,%d printed=%s", r.json.c_str(), out[0], out[1], out[2],
                  out[3], out[4], out[5], printed.c_str());
    expect(ok, (std::string("votes/shuffles/atomics/printf ") + mode).c_str(), ok ? "" : detail);
}

void test_transpose(const char* mode) {
    Worker w(g_worker);
    const int rows = 37, cols = 50;
    float* in = w.alloc<float>(rows * cols, "in");
    float* out = w.alloc<float>(rows * cols, "out");
    for (int i = 0; i < rows * cols; i++) in[i] = float(i);
    w.load("m", so("basics", mode));
    Reply r = w.launch("m", "transpose", (cols + 15) / 16, 16, {arg(in), arg(out), arg(rows), arg(cols)}, mode, 2, 0,
                       (rows + 15) / 16, 1, 16, 1);
    bool ok = r.ok();
    for (int y = 0; y < rows && ok; y++)
        for (int x = 0; x < cols && ok; x++) ok = out[x * rows + y] == in[y * cols + x];
    expect(ok, (std::string("2-D transpose ") + mode).c_str(), r.json);
}

void test_last_block(const char* mode) {
    Worker w(g_worker);
    const int n = 10000, blocks = 8;
    float* in = w.alloc<float>(n, "in");
    for (int i = 0; i < n; i++) in[i] = 1.0f;
    float* partial = w.alloc<float>(blocks, "partial");
    unsigned* ticket = w.alloc<unsigned>(1, "ticket", 0);
    float* out = w.alloc<float>(1, "out");
    w.load("m", so("basics", mode));
    Reply r = w.launch("m", "sum_last_block", blocks, 32, {arg(in), arg(partial), arg(ticket), arg(out), arg(n)}, mode);
    expect(r.ok() && *out == float(n), (std::string("threadfence last-block sum ") + mode).c_str(),
           r.json + " out=" + std::to_string(*out));
}

Reply run_bug(const char* kernel, unsigned grid, unsigned block, std::function<std::vector<std::string>(Worker&)> args,
              const char* mode = "check", bool* exited = nullptr) {
    Worker w(g_worker);
    w.command("TIMEOUT 1000");
    w.load("m", so("bugs", mode));
    Reply r = w.launch("m", kernel, grid, block, args(w), mode);
    if (exited) {
        for (int i = 0; i < 100 && !w.exited(); i++) usleep(10000);
        *exited = w.exited();
    }
    return r;
}

void test_bugs() {
    auto three = [](Worker& w) {
        float* a = w.alloc<float>(1000, "a");
        float* b = w.alloc<float>(1000, "b");
        float* c = w.alloc<float>(1000, "c");
        return std::vector<std::string>{arg(a), arg(b), arg(c), arg(1000)};
    };
    expect_diag("out-of-bounds read names buffer and element", run_bug("vector_add_unguarded", 4, 256, three),
                "out_of_bounds", "a[1000] (buffer 'a' has 1000 elements of 4 bytes)");
    expect_diag("out-of-bounds in fast mode (guard page)", run_bug("vector_add_unguarded", 40, 256, three, "fast"),
                "out_of_bounds", "buffer '");
    auto one = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(256, "out"))}; };
    expect_diag("shared-memory overflow names the variable", run_bug("shared_overflow", 1, 32, one), "out_of_bounds",
                "__shared__ variable 'tile': element 32");
    auto reduce_args = [](Worker& w) {
        float* in = w.alloc<float>(256, "in");
        for (int i = 0; i < 256; i++) in[i] = 1.0f;
        return std::vector<std::string>{arg(in), arg(w.alloc<float>(1, "partial"))};
    };
    expect_diag("missing __syncthreads is a race", run_bug("reduce_missing_sync", 1, 256, reduce_args), "race",
                "no __syncthreads()");
    auto out32 = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(32, "out"))}; };
    expect_diag("a read of another thread's write of a written tile", run_bug("shared_read_after_write", 1, 32, out32),
                "race", "element 1 of __shared__ 's': thread (1,0,0) reads it, and thread (0,0,0) wrote it");
    expect_diag("a write of another thread's read of a written tile", run_bug("shared_write_after_read", 1, 32, out32),
                "race", "element 1 of __shared__ 's': thread (1,0,0) writes it, and thread (0,0,0) read it");
    auto in_out = [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<float>(1, "in", 0)), arg(w.alloc<float>(64, "out"))};
    };
    expect_diag("a write of a word many threads read", run_bug("shared_input_then_write", 2, 32, in_out), "race",
                "in[0]: thread (5,0,0) writes it, and thread (4,0,0) read it");
    expect_diag("a write after reads in two blocks by one thread index", run_bug("reads_in_two_blocks_then_write", 2, 32, in_out),
                "race", "in[0]: thread (0,0,0) of this block writes it, and thread (1,0,0) of block (0,0,0) read it");
    auto counter = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<int>(1, "counter", 0))}; };
    expect_diag("race between blocks", run_bug("count_blocks", 4, 32, counter), "race", "between blocks");
    auto early = [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<float>(200, "in")), arg(w.alloc<float>(200, "out")), arg(200)};
    };
    expect_diag("early return before __syncthreads", run_bug("early_return", 2, 128, early), "barrier_divergence",
                "already returned");
    expect_diag("__syncthreads in both branches", run_bug("split_barrier", 1, 32, out32), "barrier_divergence",
                "at another");
    expect_diag("shuffle that half the warp skips", run_bug("shuffle_half", 1, 32, out32), "barrier_divergence",
                "__shfl_down_sync");
    auto flag = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<int>(1, "flag", 0))}; };
    bool exited = false;
    Reply hang = run_bug("spin", 1, 64, flag, "check", &exited);
    expect_diag("spinning kernel is a hang (check)", hang, "hang", "thread (63,0,0) of block (0,0,0)");
    expect(hang.has("threads 0-62 of block (0,0,0) wait in __syncthreads() here"), "hang names the barrier waiters",
           "");
    expect(exited, "worker exits after a hang", "");
    expect_diag("spinning kernel is a hang (fast)", run_bug("spin", 8, 32, flag, "fast"), "hang", "has been running");
    // Inside a block loop the threads before the spinning one have finished, those after it not started.
    Reply looped = run_bug("spin_one", 1, 32, flag, "fast");
    expect_diag("a spin inside a block loop is a hang (fast)", looped, "hang", "Thread (5,0,0) of block (0,0,0)");
    expect(looped.has("threads 6-31 have not started; threads 0-4 have finished"),
           "the hang report knows which threads of a block loop finished", looped.json);
    {
        Worker w(g_worker);
        w.command("TIMEOUT 0"); // only the host's nudge can end this one
        w.load("m", so("bugs", "check"));
        int* f = w.alloc<int>(1, "flag", 0);
        w.send("LAUNCH m spin 1 1 1 32 1 1 0 check 1 1 " + arg(f));
        usleep(300 * 1000);
        w.nudge();
        expect_diag("SIGUSR1 from the host's watchdog gives a hang report", w.reply(), "hang", "did not finish in time");
    }
    Reply segv = run_bug("null_write", 1, 1, one, "check", &exited);
    expect_diag("null pointer write is a crash", segv, "crash", "null");
    auto lane7 = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(32, "p")), arg(7)}; };
    expect_diag("a crash in check mode's block loop names the thread that crashed",
                run_bug("null_write_lane", 1, 32, lane7), "crash", "\"thread\":[7,0,0]");
    expect(exited, "worker exits after a crash", "");
    auto stack = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(1, "out")), arg(100000)}; };
    expect_diag("large local array is a stack overflow", run_bug("stack_array", 1, 1, stack, "check", &exited),
                "stack_overflow", "stack overflow");
    expect(exited, "worker exits after a stack overflow", "");
    expect_diag("deep recursion is a stack overflow (fast)", run_bug("deep_recursion", 1, 1, counter, "fast"),
                "stack_overflow", "recursion");
    auto ints = [](Worker& w) {
        int* v = w.alloc<int>(32, "v");
        for (int i = 0; i < 32; i++) v[i] = i == 7 ? -1 : 1;
        return std::vector<std::string>{arg(v)};
    };
    expect_diag("assert reports a trap", run_bug("assert_positive", 1, 32, ints), "trap", "v[threadIdx.x] > 0");
    Reply div = run_bug("divide", 1, 32, [&](Worker& w) {
        auto a = ints(w);
        a.push_back(arg(0));
        return a;
    });
    if (std::getenv("GPUBOOK_EMU_TEST_NO_SIGFPE")) // aarch64 divides by zero without a trap
        expect(div.ok(), "integer division by zero (no trap on this CPU)", div.json);
    else
        expect_diag("integer division by zero", div, "crash", "division by zero");
}

// The race shadow's segment numbers start again at 1 when they run out (GPUBOOK_EMU_SEGMENT_LIMIT
// makes that 50 here, and a 64-block vector add takes 512): every shadow page an earlier launch
// touched is zeroed, so its entries are not read as this launch's. The second launch is shifted
// by a warp, so that an entry left over would name another warp's segment: a race that is not there.
void test_segment_renumbering() {
    setenv("GPUBOOK_EMU_SEGMENT_LIMIT", "50", 1);
    Worker w(g_worker);
    unsetenv("GPUBOOK_EMU_SEGMENT_LIMIT");
    int n = 64 * 256;
    float* a = w.alloc<float>(size_t(n), "a");
    float* b = w.alloc<float>(size_t(n), "b");
    float* c = w.alloc<float>(size_t(n), "c");
    for (int i = 0; i < n; i++) a[i] = b[i] = 1.0f;
    w.load("m", so("basics", "check"));
    Reply first = w.launch("m", "vector_add", 64, 256, {arg(a), arg(b), arg(c), arg(n)}, "check");
    Reply shifted = w.launch("m", "vector_add", 64, 256, {arg(a + 32), arg(b + 32), arg(c + 32), arg(n - 32)}, "check");
    expect(first.ok() && shifted.ok(), "launches across a renumbering of race segments report nothing that is not there",
           first.json + shifted.json);
    w.load("b", so("bugs", "check"));
    Reply race = w.launch("b", "count_blocks", 4, 32, {arg(w.alloc<int>(1, "counter", 0))}, "check");
    expect_diag("a race is still found after a renumbering", race, "race", "between blocks");
}

// Under `ulimit -v` (here 1.5 GiB above the 64 GiB arena, the Rust host's size) the whole
// arena's shadows, 512 GiB for races and 2 GiB for never-written words, are refused: they then
// cover only as far as the buffers reach, so races and never-written reads are still found. When buffers reach further than even that can cover, the launch says which
// checks it could not make (before, both went unchecked without a word).
void test_refused_shadow() {
    setenv("GPUBOOK_TEST_WORKER_AS_MIB", "67072", 1);
    Worker w(g_worker, size_t(64) << 30);
    unsetenv("GPUBOOK_TEST_WORKER_AS_MIB");
    w.load("b", so("bugs", "check"));
    Reply race = w.launch("b", "count_blocks", 4, 32, {arg(w.alloc<int>(1, "counter", 0))}, "check");
    expect_diag("under ulimit -v a race between blocks is still found", race, "race", "between blocks");
    int n = 256;
    float* a = w.alloc<float>(size_t(n), "a", 0);
    float* b = w.alloc<float>(size_t(n), "b");
    float* c = w.alloc<float>(size_t(n), "c");
    char line[128];
    std::snprintf(line, sizeof line, "UNWRITTEN %#lx %zu", (unsigned long)b, n * sizeof(float));
    w.command(line);
    w.load("m", so("basics", "check"));
    std::vector<std::string> args{arg(a), arg(b), arg(c), arg(n)};
    expect_diag("under ulimit -v a never-written read is still found", w.launch("m", "vector_add", 1, 256, args),
                "uninitialized_read", "b[0] (buffer 'b'");
    expect(!race.has("unchecked"), "a launch whose shadows were covered does not say it went unchecked", race.json);
    // 80 MiB of buffers: past the first partial reservation (64 MiB of arena), so the race
    // shadow grows (mremap) and still finds the race.
    w.alloc_bytes(size_t(80) << 20, 4, "mid", 0);
    Reply grown = w.launch("b", "count_blocks", 4, 32, {arg(w.alloc<int>(1, "counter1", 0))}, "check");
    expect_diag("a race past the first partial shadow is found after it grows", grown, "race", "between blocks");
    // 700 MiB of buffers: their race shadow would be 4.2 GiB, more than the limit allows.
    w.alloc_bytes(size_t(700) << 20, 4, "big", 0);
    Reply far = w.launch("b", "count_blocks", 4, 32, {arg(w.alloc<int>(1, "counter2", 0))}, "check");
    expect(far.has("\"unchecked\":\"global-memory races (the worker could not reserve"),
           "a launch whose race shadow was refused says so", far.json);
}

void test_unwritten() {
    Worker w(g_worker);
    const int n = 300;
    float* a = w.alloc<float>(n, "a");
    float* b = w.alloc<float>(n, "b");
    float* c = w.alloc<float>(n, "c");
    char line[128];
    for (float* p : {a, b, c}) {
        std::snprintf(line, sizeof line, "UNWRITTEN %#lx %zu", (unsigned long)p, n * sizeof(float));
        w.command(line);
    }
    std::snprintf(line, sizeof line, "WROTE %#lx %zu", (unsigned long)a, n * sizeof(float));
    w.command(line); // the host copied a, but forgot b
    w.load("m", so("basics", "check"));
    std::vector<std::string> args{arg(a), arg(b), arg(c), arg(n)};
    expect_diag("reading a never-written input", w.launch("m", "vector_add", 2, 256, args), "uninitialized_read",
                "b[0] (buffer 'b'");
    // Part of b written: the first word left is named (bit 36 of the bitmap's second word).
    std::snprintf(line, sizeof line, "WROTE %#lx %zu", (unsigned long)b, 100 * sizeof(float));
    w.command(line);
    expect_diag("reading past what the host wrote", w.launch("m", "vector_add", 2, 256, args),
                "uninitialized_read", "b[100] (buffer 'b'");
    std::snprintf(line, sizeof line, "WROTE %#lx %zu", (unsigned long)b, n * sizeof(float));
    w.command(line);
    expect(w.launch("m", "vector_add", 2, 256, args).ok(), "after WROTE the same launch is fine", "");
    // c was written by that kernel: reading it in the next launch is fine too.
    std::vector<std::string> again{arg(c), arg(a), arg(b), arg(n)};
    expect(w.launch("m", "vector_add", 2, 256, again).ok(), "memory a kernel wrote counts as written", "");
    float* out = w.alloc<float>(1, "sum");
    std::snprintf(line, sizeof line, "UNWRITTEN %#lx 4", (unsigned long)out);
    w.command(line);
    expect_diag("atomicAdd on a counter nobody zeroed",
                w.launch("m", "reduce_warp", 2, 256, {arg(a), arg(out), arg(n)}), "uninitialized_read", "sum[0]");
}

// Reads of shared memory no thread of the block wrote (check mode).
void test_shared_unwritten() {
    auto edge = [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<float>(100, "in", 1)), arg(w.alloc<float>(100, "out", 0)), arg(100)};
    };
    expect_diag("a tile slot no thread filled", run_bug("shared_tile_edge", 2, 64, edge), "uninitialized_read",
                "element 36 of __shared__ variable 'tile' (a 4-byte read)");
    auto blocks = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(2, "out", 0))}; };
    expect_diag("a new block's shared memory holds nothing", run_bug("shared_from_another_block", 2, 32, blocks),
                "uninitialized_read", "element 0 of __shared__ variable 's'");
    auto hist = [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<int>(32, "in", 0)), arg(w.alloc<int>(8, "out", 0))};
    };
    expect_diag("atomicAdd on a shared histogram nobody zeroed", run_bug("shared_histogram_unzeroed", 1, 32, hist),
                "uninitialized_read", "atomic on never-written shared memory: element 0 of __shared__ variable 'h'");
    auto bytes = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<char>(32, "out", 0))}; };
    expect_diag("the unwritten byte beside a written one", run_bug("shared_other_byte", 1, 32, bytes),
                "uninitialized_read", "element 1 of __shared__ variable 'c'");
    auto out32 = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(32, "out", 0))}; };
    Reply r = run_bug("shared_struct_copy", 1, 32, out32);
    expect(r.ok(), "a struct written field by field and copied whole (padding and all)", r.json);
}

// Blocks that wait for each other hold a stack a thread; a process may have only so many
// (vm.max_map_count): past that, a diagnostic, not an abort.
void test_out_of_stacks() {
    auto flags = [](unsigned n) {
        return [n](Worker& w) { return std::vector<std::string>{arg(w.alloc<int>(n, "flags", 0))}; };
    };
    setenv("GPUBOOK_EMU_MAX_STACKS", "500", 1);
    expect_diag("more waiting threads than stacks", run_bug("wait_for_next_block", 64, 32, flags(64)),
                "launch_config", "cannot hold this launch's waiting threads: 500 threads of");
    // Past the device's 512 blocks check mode admits more, to see whom the blocks wait for.
    setenv("GPUBOOK_EMU_MAX_STACKS", "17000", 1);
    expect_diag("waiting blocks past the device's limit, out of stacks", run_bug("wait_for_next_block", 1024, 32, flags(1024)),
                "hang", "ran out of thread stacks at");
    unsetenv("GPUBOOK_EMU_MAX_STACKS");
    expect(run_bug("wait_for_next_block", 64, 32, flags(64)).ok(), "the same blocks, with stacks for all", "");
}

// Addresses far from every buffer: named as such, with the likely cause, not as an element.
void test_far_addresses() {
    auto two = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(32, "in", 0)), arg(w.alloc<float>(32, "out", 0))}; };
    // 16 GiB past `in`: beyond this test's arena (inside it, check mode's bounds check says the same).
    expect_diag("an unsigned index that wrapped", run_bug("unsigned_wrap", 1, 32, two), "crash",
                "past the end of buffer 'out'");
    auto big = [](Worker& w) { return std::vector<std::string>{arg(w.alloc<float>(40960, "a", 0))}; };
    for (const char* mode : {"check", "fast"})
        expect_diag(mode[0] == 'c' ? "a short index that wrapped, outside device memory (check)"
                                   : "a short index that wrapped, outside device memory (fast)",
                    run_bug("short_index", 160, 256, big, mode), "crash", "before buffer 'a'");
}

// Two warps of one block hand data over through a flag (fence, flag; wait, read): ordered, as
// between blocks; without the fence, with the data written after the flag or read before the
// wait, a race.
void test_warp_handoff() {
    for (bool global : {false, true}) {
        for (int variant = 0; variant < 4; variant++) {
            auto args = [global, variant](Worker& w) {
                std::vector<std::string> a;
                if (global) a = {arg(w.alloc<float>(32, "data", 0)), arg(w.alloc<int>(1, "flag", 0))};
                a.push_back(arg(w.alloc<float>(32, "out", 0)));
                a.push_back(arg(variant));
                return a;
            };
            Reply r = run_bug(global ? "warp_handoff_global" : "warp_handoff_shared", 1, 64, args);
            static const char* what[] = {"a hand-over between warps through a flag is ordered",
                                         "a flag set without a fence orders nothing", "data written after the flag",
                                         "data read before the wait"};
            std::string test = std::string(what[variant]) + (global ? " (global)" : " (shared)");
            if (variant == 0) expect(r.ok(), test.c_str(), r.json);
            else expect_diag(test.c_str(), r, "race", "data race on");
            // The report says what went wrong with the flag: it does not order the data (1, 2),
            // or the data was read before waiting for it (3).
            if (variant == 1 || variant == 2)
                expect(r.has("the flag does not order the data") && r.has("the flag: thread"),
                       (test + ": the report names the flag").c_str(), r.json);
            // (In the shared kernel a barrier comes just before, and the reader's early read runs
            // before the writer has set the flag: there is no release to name yet.)
            if (variant == 3 && global)
                expect(r.has("released the data through a flag, ") && r.has("before waiting for it"),
                       (test + ": the report names the flag not waited for").c_str(), r.json);
        }
    }
    Reply r = run_bug("wrong_flag_handoff", 1, 64, [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<float>(32, "data", 0)), arg(w.alloc<int>(2, "flags", 0)),
                                        arg(w.alloc<float>(32, "out", 0))};
    });
    expect_diag("waiting for the wrong flag is a race", r, "race", "data race on");
    expect(r.has("released the data through flags[0], but the flag this thread waited for, flags[1]"),
           "the report names both flags", r.json);
    r = run_bug("flag_read_once", 1, 64, [](Worker& w) {
        return std::vector<std::string>{arg(w.alloc<float>(32, "data", 0)), arg(w.alloc<int>(1, "flag", 0)),
                                        arg(w.alloc<float>(32, "out", 0))};
    });
    expect_diag("reading the flag once, not waiting for it, is a race", r, "race", "data race on");
    expect(r.has("read a flag (the second note) before any other thread had set it, and went on"),
           "the report says the flag was read before it was set", r.json);
}

// The same hand-over through another block (warp 0 of block 0 to block 1 to warp 1 of block 0):
// ordered when both flags follow a fence, a race when either does not.
void test_relay_handoff() {
    for (bool global : {false, true}) {
        for (int variant = 0; variant < 3; variant++) {
            auto args = [variant](Worker& w) {
                return std::vector<std::string>{arg(w.alloc<float>(32, "data", 0)), arg(w.alloc<int>(1, "first", 0)),
                                                arg(w.alloc<int>(1, "second", 0)), arg(w.alloc<float>(32, "out", 0)),
                                                arg(variant)};
            };
            Reply r = run_bug(global ? "relay_handoff" : "relay_handoff_shared", 2, 64, args);
            static const char* what[] = {"a hand-over between warps through another block is ordered",
                                         "a relay that sets its flag without a fence orders nothing",
                                         "a first flag set without a fence orders nothing"};
            std::string test = std::string(what[variant]) + (global ? " (global)" : " (shared)");
            if (variant == 0) expect(r.ok(), test.c_str(), r.json);
            else expect_diag(test.c_str(), r, "race", "data race on");
            // The report names the flag, and who must fence: the relay (1), the first writer (2).
            if (variant == 1)
                expect(r.has("does not carry that release") && r.has("whoever sets second[0] call __threadfence()") &&
                           r.has("the flag: thread"),
                       (test + ": the report names both flags").c_str(), r.json);
            if (variant == 2)
                expect(r.has("the flag does not order the data") && r.has("the flag: thread"),
                       (test + ": the report names the flag").c_str(), r.json);
        }
    }
}

// The race check keeps one entry a word while one thread owns it: a second thread's access must
// still be checked against what the first did (bugs.cu, one_owner_then_another).
void test_one_owner_then_another() {
    static const char* what[] = {"a write, then the same thread's read after a barrier, races with another block's read",
                                 "a thread's read of one half of a word races with another block's write of it, after "
                                 "the thread wrote the other half",
                                 "a thread's read of bytes it had not written races with another block's write of them",
                                 "one thread's reads and writes of a word across barriers do not race"};
    for (int variant = 0; variant < 4; variant++) {
        auto args = [variant](Worker& w) {
            return std::vector<std::string>{arg(w.alloc<unsigned>(1, "w", 0)), arg(w.alloc<unsigned>(2, "out", 0)),
                                            arg(variant)};
        };
        Reply r = run_bug("one_owner_then_another", 2, 32, args);
        if (variant == 3) expect(r.ok(), what[variant], r.json);
        else expect_diag(what[variant], r, "race", "on w[0]");
    }
}

// Volatile accesses are communication between warps, but between lanes of one warp with no
// __syncwarp() between them they race.
void test_volatile_lanes() {
    for (int sync : {0, 1}) {
        auto args = [sync](Worker& w) {
            float* in = w.alloc<float>(64, "in");
            for (int i = 0; i < 64; i++) in[i] = 1.0f;
            return std::vector<std::string>{arg(in), arg(w.alloc<float>(1, "out", 0)), arg(sync)};
        };
        Reply r = run_bug("volatile_warp_tail", 1, 32, args);
        if (sync) expect(r.ok(), "a volatile warp reduction with __syncwarp() between its steps", r.json);
        else expect_diag("a volatile warp reduction without __syncwarp()", r, "race", "(volatile)");
    }
}

void test_launch_config() {
    Worker w(g_worker);
    float* p = w.alloc<float>(16, "p");
    w.load("m", so("basics", "check"));
    std::vector<std::string> args{arg(p), arg(p), arg(p), arg(16)};
    expect_diag("1025 threads per block", w.launch("m", "vector_add", 1, 1025, args), "launch_config", "at most 1024");
    expect_diag("zero grid", w.launch("m", "vector_add", 0, 32, args), "launch_config", "zero dimension");
    expect_diag("block z over 64", w.launch("m", "vector_add", 1, 1, args, "check", 1, 0, 1, 1, 1, 65),
                "launch_config", "block_dim.z");
    expect_diag("too much dynamic shared memory", w.launch("m", "vector_add", 1, 32, args, "check", 1, 240000),
                "launch_config", "232448");
    expect_diag("wrong argument count", w.launch("m", "vector_add", 1, 32, {arg(p)}), "launch_config",
                "takes 4 parameters");
    expect_diag("unknown kernel", w.launch("m", "nope", 1, 32, args), "bad_module", "no kernel 'nope'");
    expect(w.launch("m", "vector_add", 1, 16, args).ok(), "worker still fine after config errors", "");
}

double time_launch(Worker& w, const char* kernel, unsigned blocks, const std::vector<std::string>& args,
                   const char* mode, size_t dyn = 0) {
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        auto t0 = std::chrono::steady_clock::now();
        Reply r = w.launch("m", kernel, blocks, 256, args, mode, 2, dyn);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!r.ok()) { std::printf("benchmark failed: %s\n", r.json.c_str()); g_failed++; }
        if (s < best) best = s;
    }
    return best;
}

void benchmarks(const std::string& only) {
    for (const char* mode : {"fast", "check"}) {
        if (!only.empty() && only != mode) continue;
        Worker w(g_worker, size_t(1) << 31);
        w.load("m", so("basics", mode));
        for (int n : {1 << 20, 1 << 24}) {
            if (n == (1 << 24) && std::string(mode) == "check") continue;
            float* a = w.alloc<float>(size_t(n), "a", 0);
            float* b = w.alloc<float>(size_t(n), "b", 0);
            float* c = w.alloc<float>(size_t(n), "c", 0);
            double s = time_launch(w, "vector_add", unsigned(n / 256), {arg(a), arg(b), arg(c), arg(n)}, mode);
            std::printf("TIME vector_add %-5s n=%-8d %8.3f s  %6.1f ns/thread\n", mode, n, s, s * 1e9 / n);
        }
        int n = 1 << 20;
        float* in = w.alloc<float>(size_t(n), "in", 0);
        float* partial = w.alloc<float>(size_t(n / 256), "partial", 0);
        double s = time_launch(w, "reduce_shared", unsigned(n / 256), {arg(in), arg(partial), arg(n)}, mode);
        std::printf("TIME reduce_shared %-5s n=%-8d %8.3f s  %6.1f ns/thread\n", mode, n, s, s * 1e9 / n);
        s = time_launch(w, "reduce_warp", unsigned(n / 256), {arg(in), arg(partial), arg(n)}, mode);
        std::printf("TIME reduce_warp %-5s n=%-8d %8.3f s  %6.1f ns/thread\n", mode, n, s, s * 1e9 / n);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: run_tests <worker> <dir with basics/bugs .so> [bench [fast|check]]\n");
        return 2;
    }
    g_worker = argv[1];
    g_so_dir = argv[2];
    for (const char* mode : {"check", "fast"}) {
        for (int n : {1, 255, 256, 257, 100003}) test_vector_add(mode, n);
        test_reduce(mode, "reduce_shared", 100003, 0);
        test_reduce(mode, "reduce_dynamic", 100003, 256 * sizeof(float));
        test_warp_reduce(mode, 100003);
        test_misc(mode);
        test_transpose(mode);
        test_last_block(mode);
    }
    test_bugs();
    test_segment_renumbering();
    test_refused_shadow();
    test_launch_config();
    test_unwritten();
    test_shared_unwritten();
    test_out_of_stacks();
    test_far_addresses();
    test_warp_handoff();
    test_relay_handoff();
    test_volatile_lanes();
    test_one_owner_then_another();
    if (argc > 3) benchmarks(argc > 4 ? argv[4] : "");
    std::printf("%s: %d failed\n", g_failed ? "FAILED" : "ok", g_failed);
    return g_failed ? 1 : 0;
}
