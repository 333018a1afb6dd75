// @feature: __syncthreads_count, __syncthreads_and and __syncthreads_or
// @launch: votes grid=3 block=100 i32[9]:uninit
// @expect: out[i] = i % 3 == 0 ? 20 : i % 3 == 1 ? (idiv(i, 3) == 2 ? 1 : 0) : 1
extern "C" __global__ void votes(int* out) {
    int t = threadIdx.x;
    int c = __syncthreads_count(t % 5 == 0);         // 20 of 100
    int all = __syncthreads_and(blockIdx.x == 2 || t < 99); // only block 2 has every thread
    int any = __syncthreads_or(t == 42);
    if (t == 0) {
        out[blockIdx.x * 3] = c;
        out[blockIdx.x * 3 + 1] = all;
        out[blockIdx.x * 3 + 2] = any;
    }
}
