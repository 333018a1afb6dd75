// gpubook run C1b_atomic_handoff.cu --kernel handoff --grid 1 --block 64 --arg f32[32]:iota --arg f32[32]:zeros --mode check
// CORRECT: same as C1 but exactly the emulator's own recipe: data, __threadfence(), atomic flag store; reader spins on atomic load, then reads
extern "C" __global__ void handoff(const float* in, float* out) {
    __shared__ float data[32];
    __shared__ int ready;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x < 32) {
        data[threadIdx.x] = in[threadIdx.x] * 2.f;
        __syncwarp();
        if (threadIdx.x == 0) { __threadfence(); atomicExch(&ready, 1); }
    } else {
        while (atomicAdd(&ready, 0) == 0) { }
        __threadfence();
        out[threadIdx.x - 32] = data[threadIdx.x - 32];
    }
}
