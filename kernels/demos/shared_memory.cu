// Kernels that chapter 4 (shared memory and synchronisation) walks through: small and complete,
// next to the exercises rather than instead of them. tests/demos_ch04.rs runs each one.

// ANCHOR: reverse
// Reverses each block's slice of `data` in place (blockDim.x elements a block, at most 1024).
// Thread t stores element t in shared memory and then writes back the element thread
// blockDim.x - 1 - t stored: it reads what another thread wrote, so the barrier must come
// between the two.
extern "C" __global__ void reverse_blocks(float* data) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = data[i];
    __syncthreads();  // every thread's store is done, and visible to the block
    data[i] = s[blockDim.x - 1 - t];
}
// ANCHOR_END: reverse

// The same without the barrier: a data race. On a GPU the result depends on the order in
// which warps happen to run; the emulator reports the two threads and the lines.
extern "C" __global__ void reverse_blocks_racy(float* data) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = data[i];
    data[i] = s[blockDim.x - 1 - t];
}

// ANCHOR: naive_matmul
// C = A × B (m × k times k × n, row-major), one thread per element of C, straight from global
// memory: each thread reads a row of A and a column of B, two loads for every multiply-add.
extern "C" __global__ void naive_matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int j = 0; j < k; j++) {
            sum += a[row * k + j] * b[j * n + col];
        }
        c[row * n + col] = sum;
    }
}
// ANCHOR_END: naive_matmul

// ANCHOR: naive_transpose
// out = in transposed (in: rows × cols, out: cols × rows), one element per thread, no shared
// memory. The 32 threads of a warp have consecutive columns: their reads of `in` are 32
// consecutive floats, their writes to `out` land `rows` floats apart.
extern "C" __global__ void naive_transpose(const float* in, float* out, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
// ANCHOR_END: naive_transpose

// ANCHOR: shuffle
// Each lane of a warp takes the value of the lane `delta` above it (lanes at the top keep
// their own): out[i] = in[i + delta] within each group of 32.
extern "C" __global__ void shuffle_down(const int* in, int* out, int delta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __shfl_down_sync(0xffffffffu, in[i], delta);
}
// ANCHOR_END: shuffle
