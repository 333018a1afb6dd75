// gpubook run 05_hist_nonatomic.cu --kernel hist --grid 2 --block 128 --arg i32[1024]:random --arg u32[16]:zeros --arg i32=1024 --mode check
// BUG: shared-memory histogram incremented with ++ instead of atomicAdd
extern "C" __global__ void hist(const int* data, unsigned* bins, int n) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned b = ((unsigned)data[i]) & 15u;
        local[b]++;                  // race
    }
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
