// gpubook run 01_reduce_nosync.cu --kernel reduce --grid 2 --block 256 --arg f32[512]:iota --arg f32[2]:zeros --mode check
// BUG: tree reduction with the __syncthreads() missing inside the loop
extern "C" __global__ void reduce(const float* in, float* out) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        // missing __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
