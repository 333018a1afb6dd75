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
