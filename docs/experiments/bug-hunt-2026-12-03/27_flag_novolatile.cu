// gpubook run 27_flag_novolatile.cu --kernel handoff --grid 1 --block 64 --arg f32[32]:iota --arg f32[32]:zeros --mode check
// BUG: producer warp -> consumer warp handoff through a plain (non-volatile) shared flag, no barrier
extern "C" __global__ void handoff(const float* in, float* out) {
    __shared__ float data[32];
    __shared__ int ready;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x < 32) {
        data[threadIdx.x] = in[threadIdx.x] * 2.f;
        __syncwarp();
        if (threadIdx.x == 0) ready = 1;       // plain store
    } else {
        while (ready == 0) { }                  // plain load: may be hoisted out of the loop
        out[threadIdx.x - 32] = data[threadIdx.x - 32];
    }
}
