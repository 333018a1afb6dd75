// Experiment: can C++20 coroutines run a CUDA block "as loops between barriers"?
// block_sum (kernels/bench/reduce.cu) three ways, 64 blocks of 256 threads, 9 barriers a thread:
//   native    the block's threads as loops between barriers, written by hand
//   coroutine each CUDA thread a coroutine; __syncthreads() is `co_await barrier`; the block
//             resumes its threads in turn until all wait, then releases them (no fibers)
// Built twice: plain (-O2), and with -fsanitize=thread and hooks that do what check mode's
// first test does (is the address device or shared memory? else return), counting the calls:
// a coroutine keeps locals that live across a barrier in its frame, on the heap, so the
// instrumentation sees them as memory accesses.
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kBlock = 256, kBlocks = 64, kN = kBlock * kBlocks;

// Device and shared memory of the experiment, for the hooks' range test.
static float g_in[kN], g_out[kBlocks];
static float g_partial[kBlock];

#ifdef HOOKS
extern "C" {
uint64_t g_calls_device = 0, g_calls_other = 0;
#define NS __attribute__((no_sanitize("thread")))
NS __attribute__((noinline)) static void hook(void* p) {
    auto a = reinterpret_cast<uintptr_t>(p);
    bool device = (a - uintptr_t(g_in) < sizeof g_in) | (a - uintptr_t(g_out) < sizeof g_out) |
                  (a - uintptr_t(g_partial) < sizeof g_partial);
    if (device) g_calls_device++;
    else g_calls_other++;
}
#define H(N)                                                                                   \
    NS void __tsan_read##N(void* p) { hook(p); }                                                \
    NS void __tsan_write##N(void* p) { hook(p); }                                               \
    NS void __tsan_unaligned_read##N(void* p) { hook(p); }                                      \
    NS void __tsan_unaligned_write##N(void* p) { hook(p); }
H(1) H(2) H(4) H(8) H(16)
NS void __tsan_read_range(void* p, unsigned long) { hook(p); }
NS void __tsan_write_range(void* p, unsigned long) { hook(p); }
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_init() {}
void __tsan_vptr_update(void**, void*) {}
NS void __tsan_volatile_read4(void* p) { hook(p); }
NS void __tsan_volatile_write4(void* p) { hook(p); }
}
#endif

__attribute__((no_sanitize("thread"))) static double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// --- native: the block as loops between barriers -------------------------------------------
__attribute__((noinline)) void native_block(int block) {
    for (int t = 0; t < kBlock; t++) g_partial[t] = g_in[block * kBlock + t];
    for (int s = kBlock / 2; s > 0; s /= 2)
        for (int t = 0; t < s; t++) g_partial[t] += g_partial[t + s];
    g_out[block] = g_partial[0];
}

// --- coroutine: one per CUDA thread -------------------------------------------------------
struct Thread {
    struct promise_type {
        Thread get_return_object() { return Thread{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() { std::abort(); }
        // Frames come from a free list, as a worker would keep them.
        static void* operator new(size_t n);
        static void operator delete(void* p, size_t n);
    };
    std::coroutine_handle<promise_type> h;
};

static std::vector<void*> g_frames;
static size_t g_frame_bytes = 0;
void* Thread::promise_type::operator new(size_t n) {
    g_frame_bytes = n;
    if (!g_frames.empty()) {
        void* p = g_frames.back();
        g_frames.pop_back();
        return p;
    }
    return std::malloc(n);
}
void Thread::promise_type::operator delete(void* p, size_t) { g_frames.push_back(p); }

struct Barrier {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<>) const noexcept {}
    void await_resume() const noexcept {}
};

// The kernel, as a source rewrite would leave it: threadIdx/blockIdx are parameters here.
Thread block_sum(const float* in, float* out, int n, unsigned tid, unsigned bid, unsigned bdim) {
    float* partial = g_partial;
    int t = int(tid);
    int i = int(bid * bdim) + t;
    partial[t] = i < n ? in[i] : 0.0f;
    co_await Barrier{};
    for (int s = int(bdim) / 2; s > 0; s /= 2) {
        if (t < s) partial[t] += partial[t + s];
        co_await Barrier{};
    }
    if (t == 0) out[bid] = partial[0];
}

static uint64_t g_waits = 0;

__attribute__((noinline)) void coroutine_block(int block) {
    Thread threads[kBlock];
    for (unsigned t = 0; t < kBlock; t++) threads[t] = block_sum(g_in, g_out, kN, t, unsigned(block), kBlock);
    // Run every thread to its next barrier (or its end); all reach the same barrier here.
    for (;;) {
        unsigned done = 0;
        for (unsigned t = 0; t < kBlock; t++) {
            threads[t].h.resume();
            done += threads[t].h.done();
        }
        if (done == kBlock) break;
        g_waits += kBlock;
    }
    for (unsigned t = 0; t < kBlock; t++) threads[t].h.destroy();
}

template <class F> __attribute__((no_sanitize("thread"))) double median_of(F run, int reps) {
    std::vector<double> v;
    for (int r = 0; r < reps; r++) {
        double t0 = seconds();
        for (int b = 0; b < kBlocks; b++) run(b);
        v.push_back(seconds() - t0);
    }
    std::vector<double> s = v;
    for (size_t i = 0; i < s.size(); i++)
        for (size_t j = i + 1; j < s.size(); j++)
            if (s[j] < s[i]) std::swap(s[i], s[j]);
    return s[s.size() / 2];
}

__attribute__((no_sanitize("thread"))) int main() {
    for (int i = 0; i < kN; i++) g_in[i] = float(i % 7);
    double expect = 0;
    for (int i = 0; i < kN; i++) expect += g_in[i];
    const int reps = 51;
    double tn = median_of(native_block, reps);
    double sum_native = 0;
    for (float v : g_out) sum_native += v;
    for (float& v : g_out) v = 0;
    g_waits = 0;
#ifdef HOOKS
    g_calls_device = g_calls_other = 0;
#endif
    double tc = median_of(coroutine_block, reps);
    double sum_coro = 0;
    for (float v : g_out) sum_coro += v;
    uint64_t waits = g_waits / reps;
    std::printf("sums: expected %.0f, native %.0f, coroutine %.0f\n", expect, sum_native, sum_coro);
    std::printf("native    %.6f s a launch\n", tn);
    std::printf("coroutine %.6f s a launch (%.1fx native), %llu barrier waits: %.1f ns a wait all included; frame %zu bytes\n",
                tc, tc / tn, (unsigned long long)waits, tc / double(waits) * 1e9, g_frame_bytes);
#ifdef HOOKS
    std::printf("hook calls a launch: %llu on device or shared memory, %llu elsewhere (the coroutine frame)\n",
                (unsigned long long)(g_calls_device / reps), (unsigned long long)(g_calls_other / reps));
#endif
    return sum_native == expect && sum_coro == expect ? 0 : 1;
}
