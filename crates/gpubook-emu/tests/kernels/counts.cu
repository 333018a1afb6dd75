// Kernels whose memory traffic tests/access_counts.rs knows by hand: each pair does one job two
// ways, one that wastes memory bandwidth and one that does not.

// Each thread copies one float: a warp reads 32 consecutive floats (4 sectors).
extern "C" __global__ void copy_coalesced(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Each thread reads every `stride`-th float: with a stride of 32 floats (128 bytes) every lane
// of a warp reads its own sector.
extern "C" __global__ void copy_strided(const float* in, float* out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * stride];
}

// C = A B for n x n matrices, one thread per element, every operand from global memory.
extern "C" __global__ void matmul_naive(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
}

#define TILE 16

// The same, through 16 x 16 tiles in shared memory: each element of A and B is read from
// global memory once per tile instead of once per product. n must be a multiple of TILE.
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        as[ty][tx] = a[row * n + t * TILE + tx];
        bs[ty][tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[row * n + col] = sum;
}

// out = in transposed (n x n), 32 x 32 threads a block. Reads are coalesced, writes are not:
// the lanes of a warp write a column, n floats apart.
extern "C" __global__ void transpose_naive(const float* in, float* out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < n && y < n) out[x * n + y] = in[y * n + x];
}

// Through a 32 x 32 tile in shared memory: both global reads and writes are coalesced, but
// reading the tile by column puts all 32 lanes on one bank.
extern "C" __global__ void transpose_shared(const float* in, float* out, int n) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

// The same with one float of padding per row: a column of the tile spans all 32 banks.
extern "C" __global__ void transpose_padded(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

// Counts values into `bins` bins, every thread with an atomic in global memory.
extern "C" __global__ void histogram_global(const int* in, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[in[i]], 1);
}

// The same, privatised: a block counts in shared memory, then adds its counts to global memory.
extern "C" __global__ void histogram_shared(const int* in, int* bins, int n) {
    __shared__ int local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&local[in[i]], 1);
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// One float4 per thread: a warp's request is 32 x 16 = 512 bytes, 16 sectors.
extern "C" __global__ void copy_vec4(const float4* in, float4* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// The same through shared memory: a warp writes and reads 512 bytes of float4s, 4 wavefronts
// each (a wavefront moves one 4-byte word per bank, 128 bytes), none of them a conflict.
extern "C" __global__ void stage_vec4(const float4* in, float4* out, int n4) {
    __shared__ float4 tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) tile[threadIdx.x] = in[i];
    __syncthreads();
    if (i < n4) out[i] = tile[threadIdx.x];
}

// Each warp reads its 32 floats in reverse lane order: the same sectors as copy_coalesced, but
// the lanes' addresses fall as the lane number rises.
extern "C" __global__ void copy_reversed(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[n - 1 - i];
}

// Odd lanes read `a`, even lanes `b`, through one pointer: a warp's loads touch two buffers.
extern "C" __global__ void interleave(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* from = (i & 1) ? a : b;
    if (i < n) out[i] = from[i];
}

// Check mode's block loop assembles a warp's request in line while its lanes come one after
// another (device/check_state.h, the site's run); each kernel below ends that run another way.
// Odd lanes only: lane 3 is not lane 2, and the run goes to the warp's counts Site.
extern "C" __global__ void copy_odd_lanes(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (i & 1)) out[i] = in[i];
}

// Each lane reads `reps` times at one load: its second read is not the next lane's turn.
extern "C" __global__ void sum_reps(const float* in, float* out, int n, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0;
    for (int k = 0; k < reps; k++) acc += in[i + k * n];
    out[i] = acc;
}

// A barrier ends the loop inside thread 0: its lanes' run goes on in the Site, on fibers.
extern "C" __global__ void copy_across_barrier(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    __syncthreads();
    if (i < n) out[i] = 2 * v;
}

// Thread 0 alone writes shared memory: its shared store must not stay with the threads after it.
extern "C" __global__ void one_shared_store(const float* in, float* out, int n) {
    __shared__ float s[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) s[0] = 1;
    if (i < n) out[i] = in[i];
}
