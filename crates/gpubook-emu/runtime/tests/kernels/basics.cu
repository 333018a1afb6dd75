// Kernels that must work. Written as source.rs's rewrite leaves them (__shared__ already
// turned into gpubook::shared_var / dynamic_shared, GPUBOOK_EXPORT_KERNEL appended).
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Shared-memory tree reduction (PMPP ch.10 style); one partial sum per block.
extern "C" __global__ void reduce_shared(const float* in, float* partial, int n) {
    auto& sdata = *::gpubook::shared_var<float[256]>(0, "sdata");
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    sdata[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = sdata[0];
}

// The same with dynamic shared memory (extern __shared__).
extern "C" __global__ void reduce_dynamic(const float* in, float* partial, int n) {
    float* sdata = ::gpubook::dynamic_shared<float>("sdata");
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    sdata[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = sdata[0];
}

// Warp-shuffle reduction: each warp reduces with __shfl_down_sync, then one atomicAdd.
extern "C" __global__ void reduce_warp(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

// Votes, xor-shuffle broadcast, __syncthreads_count, integer atomics, printf.
extern "C" __global__ void misc(int* out) {
    int lane = threadIdx.x & 31;
    unsigned ballot = __ballot_sync(0xffffffff, lane % 2 == 0);
    int sum = lane;
    for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffff, sum, m);
    int count = __syncthreads_count(threadIdx.x < 10);
    if (threadIdx.x == 0) printf("hello from block %d, %d threads\n", blockIdx.x, blockDim.x);
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (int)ballot;
        out[1] = sum;
        out[2] = count;
    }
    atomicAdd(&out[3], 1);
    atomicMax(&out[4], (int)threadIdx.x);
    float4 f = make_float4(1, 2, 3, 4);
    if (threadIdx.x == 5 && blockIdx.x == 0) out[5] = (int)(f.x + f.w) + (int)sqrtf(16.0f) + min(3, 7) + (alignof(float4) == 16);
}

// 2-D blocks and a 2-D __shared__ tile: transpose a rows x cols matrix.
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    auto& tile = *::gpubook::shared_var<float[16][17]>(0, "tile");
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * 16 + threadIdx.x;
    y = blockIdx.x * 16 + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

// The "last block" pattern: partial sums, __threadfence(), an atomic ticket; the last block
// to finish adds the partials (no race report: the fence orders the blocks).
extern "C" __global__ void sum_last_block(const float* in, float* partial, unsigned* ticket, float* out, int n) {
    auto& is_last = *::gpubook::shared_var<bool>(0, "is_last");
    float v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
    v = __reduce_add_sync(0xffffffff, (int)v);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        __threadfence();
        is_last = atomicInc(ticket, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last && threadIdx.x == 0) {
        float total = 0;
        for (unsigned b = 0; b < gridDim.x; b++) total += partial[b];
        *out = total;
    }
}

GPUBOOK_EXPORT_KERNEL(transpose)
GPUBOOK_EXPORT_KERNEL(sum_last_block)
GPUBOOK_EXPORT_KERNEL(vector_add)
GPUBOOK_EXPORT_KERNEL(reduce_shared)
GPUBOOK_EXPORT_KERNEL(reduce_dynamic)
GPUBOOK_EXPORT_KERNEL(reduce_warp)
GPUBOOK_EXPORT_KERNEL(misc)
