// gpubook run C3_warpsync_reduce.cu --kernel reduce --grid 1 --block 256 --arg f32[256]:iota --arg f32[1]:zeros --mode check
// CORRECT: CUDA-9 style warp-synchronous tail with register temporaries and __syncwarp between read and write
extern "C" __global__ void reduce(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (int st = 128; st > 32; st >>= 1) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
    if (t < 32) {
        float v = s[t] + s[t + 32];
        __syncwarp();
        s[t] = v;
        __syncwarp();
        for (int off = 16; off > 0; off >>= 1) {
            v += s[t + off];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
    }
    if (t == 0) out[0] = s[0];
}
