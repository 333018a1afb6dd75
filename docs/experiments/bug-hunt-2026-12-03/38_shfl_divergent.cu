// gpubook run 38_shfl_divergent.cu --kernel fold --grid 1 --block 32 --arg f32[32]:iota --arg f32[16]:zeros --mode check
// BUG: shuffle called inside a branch only half of the warp takes, with the full mask
extern "C" __global__ void fold(const float* in, float* out) {
    int lane = threadIdx.x;
    float v = in[lane];
    if (lane < 16) {
        float hi = __shfl_sync(0xffffffff, v, lane + 16);
        out[lane] = v + hi;
    }
}
