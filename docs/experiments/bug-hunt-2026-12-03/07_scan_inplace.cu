// gpubook run 07_scan_inplace.cu --kernel scan --grid 1 --block 128 --arg f32[128]:iota --arg f32[128]:zeros --mode check
// BUG: Hillis-Steele scan done in place in one buffer: in each step thread t reads s[t-off] while thread t-off writes it
extern "C" __global__ void scan(const float* in, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        if (t >= off) s[t] += s[t - off];
        __syncthreads();
    }
    out[t] = s[t];
}
