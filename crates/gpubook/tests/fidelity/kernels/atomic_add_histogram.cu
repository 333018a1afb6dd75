// @feature: atomicAdd on shared memory (a block's histogram) then on global memory (the total)
// @launch: histogram grid=8 block=256 i32[4096]:iota i32[16]:zeros i32=4096
// @expect: bins[i] = 256
#define BINS 16
extern "C" __global__ void histogram(const int* data, int* bins, int n) {
    __shared__ int local[BINS];
    if (threadIdx.x < BINS) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] % BINS], 1);
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
