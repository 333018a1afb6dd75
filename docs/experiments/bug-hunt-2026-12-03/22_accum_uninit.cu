// gpubook run 22_accum_uninit.cu --kernel rowsum --grid 1 --block 32 --arg f32[1024]:iota --arg f32[32]:uninit --arg i32=32 --mode check
// BUG: accumulates straight into the output, which the host never cleared (cudaMalloc without cudaMemset)
extern "C" __global__ void rowsum(const float* m, float* out, int n) {
    int r = threadIdx.x;
    for (int c = 0; c < n; ++c) out[r] += m[r * n + c];
}
