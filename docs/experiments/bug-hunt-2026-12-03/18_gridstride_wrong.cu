// gpubook run 18_gridstride_wrong.cu --kernel accum --grid 4 --block 128 --arg f32[1024]:iota --arg f32[1024]:zeros --arg i32=1024 --mode check
// BUG: grid-stride loop steps by blockDim.x instead of blockDim.x*gridDim.x: blocks overlap and += the same elements
extern "C" __global__ void accum(const float* in, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)
        out[i] += in[i];
}
