// gpubook run C1_volatile_handoff.cu --kernel handoff --grid 1 --block 64 --arg f32[32]:iota --arg f32[32]:zeros --mode check
// CORRECT: producer warp -> consumer warp inside a block via a volatile shared flag + __threadfence_block (no barrier)
extern "C" __global__ void handoff(const float* in, float* out) {
    __shared__ float data[32];
    __shared__ volatile int ready;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x < 32) {
        data[threadIdx.x] = in[threadIdx.x] * 2.f;
        __threadfence_block();
        __syncwarp();
        if (threadIdx.x == 0) ready = 1;
    } else {
        while (ready == 0) { }
        __threadfence_block();
        out[threadIdx.x - 32] = ((volatile float*)data)[threadIdx.x - 32];
    }
}
