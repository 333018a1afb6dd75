// `gpubook emu-bench`'s native baseline: the bench kernels' bodies as plain C++ loops, built with
// the compiler and the optimisation flags of the emulator's fast mode, blocks spread over as many
// threads as fast mode uses. What is left between this and fast mode is the cost of emulating
// (fibers, barriers, the launch), not of the compiler's settings.
//
// Each kernel runs its blocks' threads in a loop; a __syncthreads() becomes the end of one loop
// over the block's threads and the start of the next, so every thread's work is done as written.
//
//   native KERNEL SIZE REPS THREADS   prints the median seconds of REPS runs (after one warm-up)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// Blocks 0..blocks-1 split in contiguous ranges over `threads` threads. One thread runs them on
// the calling thread: starting a thread (tens of microseconds) would be most of a small launch's
// time, and check mode, which it is compared with, starts none.
template <class F>
static void for_blocks(int blocks, int threads, F body) {
    if (threads == 1) {
        for (int b = 0; b < blocks; b++) body(b);
        return;
    }
    std::vector<std::thread> pool;
    int per = (blocks + threads - 1) / threads;
    for (int t = 0; t < threads; t++) {
        int lo = t * per, hi = std::min(blocks, lo + per);
        if (lo < hi) pool.emplace_back([=] { for (int b = lo; b < hi; b++) body(b); });
    }
    for (auto& th : pool) th.join();
}

// kernels/bench/vector_add.cu's vector_add_naive, 256 threads a block.
static void vector_add(const float* a, const float* b, float* c, int n, int threads) {
    for_blocks((n + 255) / 256, threads, [=](int block) {
        for (int t = 0; t < 256; t++) {
            int i = block * 256 + t;
            if (i < n) c[i] = a[i] + b[i];
        }
    });
}

// kernels/bench/reduce.cu's block_sum: shared partials, a tree with a barrier per step.
static void block_sum(const float* in, float* out, int n, int threads) {
    for_blocks((n + 255) / 256, threads, [=](int block) {
        float partial[256];
        for (int t = 0; t < 256; t++) {
            int i = block * 256 + t;
            partial[t] = i < n ? in[i] : 0.0f;
        }
        for (int s = 128; s > 0; s /= 2)
            for (int t = 0; t < s; t++) partial[t] += partial[t + s];
        out[block] = partial[0];
    });
}

// kernels/perf/roofline.cu's matmul_tiled (16 x 16 tiles), square n x n.
static void matmul_tiled(const float* a, const float* b, float* c, int n, int threads) {
    const int T = 16, tiles = (n + T - 1) / T;
    for_blocks(tiles * tiles, threads, [=](int block) {
        int by = block / tiles, bx = block % tiles;
        float as[T][T], bs[T][T], sum[T][T] = {};
        for (int t = 0; t < n; t += T) {
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++) {
                    int row = by * T + ty, col = bx * T + tx;
                    as[ty][tx] = row < n && t + tx < n ? a[(size_t)row * n + t + tx] : 0.0f;
                    bs[ty][tx] = t + ty < n && col < n ? b[(size_t)(t + ty) * n + col] : 0.0f;
                }
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++)
                    for (int j = 0; j < T; j++) sum[ty][tx] += as[ty][j] * bs[j][tx];
        }
        for (int ty = 0; ty < T; ty++)
            for (int tx = 0; tx < T; tx++) {
                int row = by * T + ty, col = bx * T + tx;
                if (row < n && col < n) c[(size_t)row * n + col] = sum[ty][tx];
            }
    });
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s vector_add|block_sum|matmul_tiled SIZE REPS THREADS\n", argv[0]);
        return 2;
    }
    const char* kernel = argv[1];
    int n = atoi(argv[2]), reps = std::max(1, atoi(argv[3])), threads = std::max(1, atoi(argv[4]));
    bool matmul = strcmp(kernel, "matmul_tiled") == 0;
    size_t len = matmul ? (size_t)n * n : (size_t)n;
    std::vector<float> a(len), b(len, 1.0f), c(len);
    for (size_t i = 0; i < len; i++) a[i] = matmul ? (float)(i % 7) : (strcmp(kernel, "block_sum") == 0 ? (float)(i % 7) : (float)i);
    auto run = [&] {
        if (strcmp(kernel, "vector_add") == 0) vector_add(a.data(), b.data(), c.data(), n, threads);
        else if (strcmp(kernel, "block_sum") == 0) block_sum(a.data(), c.data(), n, threads);
        else if (matmul) matmul_tiled(a.data(), b.data(), c.data(), n, threads);
        else { fprintf(stderr, "unknown kernel %s\n", kernel); exit(2); }
    };
    run();
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        auto start = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    // A checksum keeps the compiler from dropping the work, and lets the caller check it.
    double check = 0;
    for (size_t i = 0; i < len; i++) check += c[i];
    printf("%.9f %.1f\n", t[t.size() / 2], check);
    return 0;
}
