// The two-GPU baseline of issue 17, built on the GPU machine with nvcc (two-gpus.sh):
//   1. peer stores: a kernel on GPU 0 stores into GPU 1's memory through a peer pointer (what
//      gpubook's symmetric buffers do across devices), timed with CUDA events;
//   2. NCCL: the same bytes as an all-to-all between the two GPUs (ncclSend/ncclRecv in a
//      group), one process driving both, timed the same way.
// It prints one line per size with both bandwidths, so the ratio is measured side by side.
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); std::exit(1); } } while (0)
#define NK(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { \
    std::printf("NCCL error %s at %s:%d\n", ncclGetErrorString(r), __FILE__, __LINE__); std::exit(1); } } while (0)

// Each block copies its slice; dst may be a peer's memory.
__global__ void peer_copy(const float4* src, float4* dst, long long n4) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

int main() {
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (n < 2) { std::printf("SKIPPED: %d GPU visible, the baseline needs 2\n", n); return 0; }
    int can01 = 0, can10 = 0;
    CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    std::printf("peer access 0->1: %s, 1->0: %s\n", can01 ? "yes" : "no", can10 ? "yes" : "no");
    if (!can01) return 1;
    CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0));
    CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

    int devs[2] = {0, 1};
    ncclComm_t comms[2];
    NK(ncclCommInitAll(comms, 2, devs));
    cudaStream_t st[2];
    for (int d = 0; d < 2; ++d) { CK(cudaSetDevice(d)); CK(cudaStreamCreate(&st[d])); }

    std::printf("%10s %14s %14s %14s\n", "MiB", "peer GB/s", "peer 20 SMs", "NCCL a2a GB/s");
    for (size_t mib : {1, 16, 64, 256}) {
        size_t bytes = mib << 20, n4 = bytes / 16;
        std::vector<float*> src(2), dst(2);
        for (int d = 0; d < 2; ++d) {
            CK(cudaSetDevice(d));
            CK(cudaMalloc(&src[d], bytes)); CK(cudaMalloc(&dst[d], bytes));
            CK(cudaMemset(src[d], 1, bytes));
        }
        // Peer stores from GPU 0 into GPU 1, with every SM, then with 20 blocks (V3's share).
        auto peer = [&](int blocks) {
            CK(cudaSetDevice(0));
            cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
            peer_copy<<<blocks, 1024, 0, st[0]>>>((float4*)src[0], (float4*)dst[1], (long long)n4);
            CK(cudaEventRecord(a, st[0]));
            for (int r = 0; r < 10; ++r) peer_copy<<<blocks, 1024, 0, st[0]>>>((float4*)src[0], (float4*)dst[1], (long long)n4);
            CK(cudaEventRecord(b, st[0])); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
            float ms = 0; CK(cudaEventElapsedTime(&ms, a, b));
            return 10.0 * bytes / (ms * 1e-3) / 1e9;
        };
        double all = peer(2 * sms), twenty = peer(20);
        // NCCL all-to-all: each GPU sends half its buffer to the other and receives half.
        auto a2a = [&]() {
            NK(ncclGroupStart());
            for (int d = 0; d < 2; ++d) {
                size_t half = bytes / 2 / sizeof(float);
                NK(ncclSend(src[d] + half * (1 - d), half, ncclFloat, 1 - d, comms[d], st[d]));
                NK(ncclRecv(dst[d] + half * (1 - d), half, ncclFloat, 1 - d, comms[d], st[d]));
            }
            NK(ncclGroupEnd());
        };
        a2a();
        for (int d = 0; d < 2; ++d) { CK(cudaSetDevice(d)); CK(cudaStreamSynchronize(st[d])); }
        CK(cudaSetDevice(0));
        cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        CK(cudaEventRecord(a, st[0]));
        for (int r = 0; r < 10; ++r) a2a();
        CK(cudaEventRecord(b, st[0]));
        for (int d = 0; d < 2; ++d) { CK(cudaSetDevice(d)); CK(cudaStreamSynchronize(st[d])); }
        float ms = 0; CK(cudaEventElapsedTime(&ms, a, b));
        // Bytes each GPU sent: half its buffer per all-to-all.
        double nccl = 10.0 * (bytes / 2) / (ms * 1e-3) / 1e9;
        std::printf("%10zu %14.1f %14.1f %14.1f\n", mib, all, twenty, nccl);
        for (int d = 0; d < 2; ++d) { CK(cudaSetDevice(d)); CK(cudaFree(src[d])); CK(cudaFree(dst[d])); }
    }
    for (int d = 0; d < 2; ++d) ncclCommDestroy(comms[d]);
    return 0;
}
