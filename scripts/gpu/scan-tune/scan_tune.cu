// The one-pass scan of kernels/perf/scan.cu at other tile shapes, against a device-to-device
// copy, on a GPU with nvcc (see run.sh): which shape `gpubook perf-bench` should use.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "../../../kernels/perf/scan.cu"

// Where the time goes: the same kernel without its ticket (tiles in block order), without the
// look-back (wrong sums: the bound of load, scan and store), with the tile's total published
// before its scan.
enum Probe { NO_TICKET, NO_LOOK_BACK, EARLY_TOTAL };
template <Probe P>
__global__ void scan_probe(const unsigned* x, unsigned* y, unsigned long long* status, int n) {
    __shared__ unsigned warp_totals[VEC][WARPS];
    __shared__ unsigned prefix_s;
    unsigned tile = blockIdx.x;
    size_t base = (size_t)tile * TILE;
    uint4 v[VEC];
    load_tile(x, base, (size_t)n, v);
    unsigned prefix = 0;
    if (P == EARLY_TOTAL) {
        unsigned s = 0;
        for (int k = 0; k < VEC; k++) s += v[k].x + v[k].y + v[k].z + v[k].w;
        for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(FULL, s, d);
        if (threadIdx.x % 32 == 0) warp_totals[0][threadIdx.x / 32] = s;
        __syncthreads();
        if (threadIdx.x < 32) {
            unsigned t = threadIdx.x < WARPS ? warp_totals[0][threadIdx.x] : 0u;
            for (int d = 16; d > 0; d /= 2) t += __shfl_xor_sync(FULL, t, d);
            unsigned p = look_back(status, tile, t);
            if (threadIdx.x == 0) prefix_s = p;
        }
        __syncthreads();
        scan_tile(v, warp_totals);
        prefix = prefix_s;
    } else {
        unsigned total = scan_tile(v, warp_totals);
        if (P == NO_TICKET && threadIdx.x < 32) {
            unsigned p = look_back(status, tile, total);
            if (threadIdx.x == 0) prefix_s = p;
        }
        __syncthreads();
        if (P == NO_TICKET) prefix = prefix_s;
    }
    add_to_tile(v, prefix);
    store_tile(y, base, (size_t)n, v);
}

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main() {
    const size_t n = size_t(1) << 26;
    const unsigned tiles = unsigned((n + TILE - 1) / TILE);
    std::vector<unsigned> x(n), y(n);
    for (size_t i = 0; i < n; i++) x[i] = unsigned(i % 5);
    unsigned *dx, *dy, *dc;
    unsigned long long* status;
    CHECK(cudaMalloc(&dx, n * 4));
    CHECK(cudaMalloc(&dy, n * 4));
    CHECK(cudaMalloc(&dc, n * 4));
    CHECK(cudaMalloc(&status, (tiles + 1) * 8));
    CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    auto median = [&](auto body) {
        std::vector<float> ms;
        for (int r = 0; r < 21; r++) {
            cudaEventRecord(a);
            body();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float t;
            cudaEventElapsedTime(&t, a, b);
            if (r > 0) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    };
    float copy = median([&] { cudaMemcpyAsync(dc, dx, n * 4, cudaMemcpyDeviceToDevice); });
    float scan = median([&] {
        cudaMemsetAsync(status, 0, (tiles + 1) * 8);
        scan_decoupled<<<tiles, THREADS>>>(dx, dy, status, int(n));
    });
    CHECK(cudaGetLastError());
    auto wrong = [&] {
        cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost);
        unsigned run = 0;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) { run += x[i]; bad += y[i] != run; }
        return bad;
    };
    size_t bad = wrong();
    float probe[3];
    size_t probe_bad[3];
    probe[0] = median([&] { cudaMemsetAsync(status, 0, (tiles + 1) * 8); scan_probe<NO_TICKET><<<tiles, THREADS>>>(dx, dy, status, int(n)); });
    probe_bad[0] = wrong();
    probe[1] = median([&] { scan_probe<NO_LOOK_BACK><<<tiles, THREADS>>>(dx, dy, status, int(n)); });
    probe_bad[1] = 0;
    probe[2] = median([&] { cudaMemsetAsync(status, 0, (tiles + 1) * 8); scan_probe<EARLY_TOTAL><<<tiles, THREADS>>>(dx, dy, status, int(n)); });
    probe_bad[2] = wrong();
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, scan_decoupled);
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scan_decoupled, THREADS, 0);
    printf("look %d  threads %4d  vec %d  tile %5d  regs %3d  blocks/SM %2d  copy %.4f ms  scan %.4f ms  %5.1f%% of copy  %s\n",
           LOOK, THREADS, VEC, TILE, attr.numRegs, per_sm, copy, scan, 100.0 * copy / scan, bad ? "WRONG" : "ok");
    const char* names[3] = {"no ticket", "no look-back (sums wrong)", "total before the scan"};
    for (int i = 0; i < 3; i++)
        printf("    %-28s %.4f ms  %5.1f%% of copy  %s\n", names[i], probe[i], 100.0 * copy / probe[i], probe_bad[i] ? "WRONG" : "ok");
    return bad != 0;
}
