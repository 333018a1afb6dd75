// gpubook run C1c_global_handoff.cu --kernel handoff --grid 1 --block 64 --arg f32[32]:iota --arg f32[32]:zeros --arg f32[32]:zeros --arg i32[1]:zeros --mode check
// CORRECT: like C1b but the data and flag live in GLOBAL memory (intra-block, warp 0 -> warp 1)
extern "C" __global__ void handoff(const float* in, float* out, float* data, int* ready) {
    if (threadIdx.x < 32) {
        data[threadIdx.x] = in[threadIdx.x] * 2.f;
        __syncwarp();
        if (threadIdx.x == 0) { __threadfence(); atomicExch(ready, 1); }
    } else {
        while (atomicAdd(ready, 0) == 0) { }
        __threadfence();
        out[threadIdx.x - 32] = data[threadIdx.x - 32];
    }
}
