// @feature: atomicCAS in a retry loop: a float maximum built from compare-and-swap
// @launch: float_max grid=8 block=128 f32[1000]:iota f32[1]:-1 i32=1000
// @expect: result[0] = 999
__device__ void atomic_max_float(float* addr, float v) {
    int* p = (int*)addr;
    int old = *(volatile int*)p; // a plain read would race with the other threads' CAS
    while (__int_as_float(old) < v) {
        int seen = atomicCAS(p, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
}
extern "C" __global__ void float_max(const float* data, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(result, data[(i * 7) % n]);
}
