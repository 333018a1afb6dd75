// Fast mode runs a block's threads as a loop until one calls the worker (a barrier, a warp
// function): these kernels end that loop part way through a block, or only in some blocks.

// Only the last block reaches a barrier: its threads reverse their slice through shared memory.
// The other blocks copy theirs.
extern "C" __global__ void barrier_in_last_block(const float* in, float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (blockIdx.x + 1 < gridDim.x) {
        out[i] = in[i];
        return;
    }
    tile[t] = in[i];
    __syncthreads();
    out[i] = tile[blockDim.x - 1 - t];
}

// Warp 0 adds without help; the later warps sum each warp with shuffles.
extern "C" __global__ void shuffle_after_warp_zero(const float* in, float* out) {
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    float v = in[i];
    if (t < 32) {
        out[i] = v + 1.0f;
        return;
    }
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    out[i] = (t % 32 == 0) ? v : 0.0f;
}

// Lanes 0..15 return; the rest ask which lanes are still running.
extern "C" __global__ void active_after_returns(unsigned* out) {
    if (threadIdx.x < 16) return;
    out[threadIdx.x] = __activemask();
}

// Threads 0..6 return before the barrier the others wait at.
extern "C" __global__ void early_return_before_barrier(float* out) {
    if (threadIdx.x < 7) return;
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}
