// gpubook run 11_shfl_partial_warp.cu --kernel wsum --grid 1 --block 48 --arg f32[48]:iota --arg f32[2]:zeros --mode check
// BUG: full mask 0xffffffff used in the second warp, which has only 16 threads (blockDim 48)
extern "C" __global__ void wsum(const float* in, float* out) {
    float v = in[threadIdx.x];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
}
