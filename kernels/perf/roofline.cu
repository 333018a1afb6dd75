// Kernels for chapter 5's roofline (`gpubook perf-bench`): one that does nothing but arithmetic,
// to measure the compute roof, and a matrix multiply with and without shared-memory tiles, whose
// arithmetic intensity the tiles change.

// ANCHOR: fma_peak
// Eight independent chains of fused multiply-adds per thread, `iters` steps each: 16 FLOPs a step
// and no memory traffic but one store, so the SM's FP32 units are the only limit.
extern "C" __global__ void fma_peak(float* out, int iters, float b, float c) {
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; k++) a[k] = threadIdx.x * 1e-3f + k;
#pragma unroll 4
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) a[k] = fmaf(a[k], b, c);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++) s += a[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// ANCHOR_END: fma_peak

// C = A × B (m × k times k × n, row-major), 16 × 16 tiles of A and B staged in shared memory:
// each element loaded from global memory serves 16 multiply-adds.
#define T 16
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < k; t += T) {
        as[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? a[(size_t)row * k + t + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = t + threadIdx.y < k && col < n ? b[(size_t)(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) sum += as[threadIdx.y][j] * bs[j][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[(size_t)row * n + col] = sum;
}
