// Synchronisation bugs a grader should explain.

// Only the first 16 threads reach the barrier: barrier divergence.
extern "C" __global__ void divergent_barrier(float* out) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    out[threadIdx.x] = v;
}

// Reads a neighbour's shared element without a barrier: a race.
extern "C" __global__ void missing_barrier(float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = tile[63 - threadIdx.x];
}

// Writes one element past a shared array.
extern "C" __global__ void shared_overflow(float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x + 1] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}

// Shared memory between barriers (the race detector's shadow starts each word afresh in each
// interval between two barriers): kernels that must run clean, and the races they turn into.

// Four threads store the four bytes of one word: CUDA stores are byte-granular, no race.
extern "C" __global__ void shared_bytes_per_thread(float* out) {
    __shared__ unsigned char b[64];
    b[threadIdx.x] = (unsigned char)threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = b[63 - threadIdx.x];
}

// The same words written, read by a neighbour and written again, a barrier between each, in
// many blocks (which run on the same worker's shadow one after another).
extern "C" __global__ void shared_rounds(float* out) {
    __shared__ float tile[64];
    float acc = 0;
    for (int round = 0; round < 3; round++) {
        tile[threadIdx.x] = threadIdx.x + round;
        __syncthreads();
        acc += tile[63 - threadIdx.x];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// As shared_rounds, without the barrier after the read: thread 63 - t may read tile[t] in the
// same interval as thread t writes it again.
extern "C" __global__ void shared_rounds_missing_second_barrier(float* out) {
    __shared__ float tile[64];
    float acc = 0;
    for (int round = 0; round < 3; round++) {
        tile[threadIdx.x] = threadIdx.x + round;
        __syncthreads();
        acc += tile[63 - threadIdx.x];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Lanes of one warp swap through shared memory: __syncwarp() orders them.
extern "C" __global__ void shared_lane_swap(float* out) {
    __shared__ float v[32];
    v[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = v[threadIdx.x ^ 1];
}

// The same swap without __syncwarp(): lanes of one warp do not run in lockstep.
extern "C" __global__ void shared_lane_swap_unordered(float* out) {
    __shared__ float v[32];
    v[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = v[threadIdx.x ^ 1];
}
