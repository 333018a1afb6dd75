// gpubook run 37_global_accum_race.cu --kernel dsum --grid 8 --block 64 --arg f64[512]:iota --arg f64[1]:zeros --mode check
// BUG: double-precision block sums added into one global total with a plain += (no atomicAdd)
extern "C" __global__ void dsum(const double* in, double* total) {
    __shared__ double s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int st = 32; st > 0; st >>= 1) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
    if (t == 0) *total += s[0];
}
