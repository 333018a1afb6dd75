// @feature: __device__ variables: a counter that outlives its launch, an initialised table
// @launch: count grid=4 block=250 i32[1000]:uninit
// @launch: read_counter grid=1 block=1 u32[1]:uninit
// @expect: looked_up[i] = (i % 4 + 1) * 10
// @expect: counter_out[0] = 1000
__device__ unsigned counter;
__device__ int table[4] = {10, 20, 30, 40};
extern "C" __global__ void count(int* looked_up) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&counter, 1u);
    looked_up[i] = table[i % 4];
}
extern "C" __global__ void read_counter(unsigned* counter_out) {
    counter_out[0] = counter;
}
