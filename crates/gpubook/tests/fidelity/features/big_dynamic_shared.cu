// 100 000 bytes of dynamic shared memory, past the 48 KiB a block gets by default: the launch
// opts in first (function.set_max_dynamic_shared_bytes, CUDA's cudaFuncSetAttribute with
// cudaFuncAttributeMaxDynamicSharedMemorySize). Each block fills 25 000 ints and sums them back.
// launch: big_shared grid=2 block=256 shared=100000
// out: int 2
// expect: 312487500 937487500
// Block b stores b*25000 + i for i < 25000; the sum is 25000*b*25000 + 24999*25000/2.

extern "C" __global__ void big_shared(int* out) {
    extern __shared__ int values[];
    const int n = 25000;
    for (int i = threadIdx.x; i < n; i += blockDim.x) values[i] = blockIdx.x * n + i;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long sum = 0;
        for (int i = 0; i < n; i++) sum += values[i];
        out[blockIdx.x] = (int)sum;
    }
}
