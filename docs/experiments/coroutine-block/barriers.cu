// A kernel of nothing but barriers, for the cost of one barrier wait in the emulator's modes
// (barrier-cost.sh runs it with K = 1000 and 2000 and takes the difference).
extern "C" __global__ void bars_only(float* out, int k) {
    for (int i = 0; i < k; i++) __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = float(k);
}
