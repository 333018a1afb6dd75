// Chapter 14's question: what does a communication kernel that holds k SMs cost a matrix
// multiply that fills the rest? Two kernels for gpubook::labs::channels.

#define TILE 16

// C = A B for n x n row-major matrices, in 16 x 16 shared-memory tiles (chapter 4's kernel):
// a grid of (n / 16)^2 blocks, enough to fill every SM many times over.
extern "C" __global__ void gemm_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] = row < n && k0 + threadIdx.x < n ? a[(long long)row * n + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = col < n && k0 + threadIdx.y < n ? b[(long long)(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[(long long)row * n + col] = acc;
}

// The communication stand-in: each of the grid's blocks (one per SM it holds) copies its slice
// of src into dst, `rounds` times over, as a channel's SM copies tokens into peers' buffers.
// Fixed work, not a fixed time: alone and beside the multiply it moves the same bytes.
extern "C" __global__ void comm_copy(const float* src_f, float* dst_f, long long n4, int rounds) {
    // float4 accesses: 16 bytes a thread, as a channel's copy loops do (the buffers are f32).
    const float4* src = (const float4*)src_f;
    float4* dst = (float4*)dst_f;
    long long per = (n4 + gridDim.x - 1) / gridDim.x;
    long long begin = min(n4, (long long)blockIdx.x * per), end = min(n4, begin + per);
    for (int r = 0; r < rounds; ++r) {
        for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
            float4 v = __ldcg(src + i);
            dst[i] = v;
        }
    }
}
