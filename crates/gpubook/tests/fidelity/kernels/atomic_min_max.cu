// @feature: atomicMin and atomicMax on int (negative values included)
// @launch: min_max grid=4 block=256 i32[1000]:iota i32[2]:2147483647,-2147483648 i32=1000
// @expect: result[0] = -500
// @expect: result[1] = 499
extern "C" __global__ void min_max(const int* data, int* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = (data[i] * 37) % 1000 - 500; // a permutation of -500..499
    atomicMin(&result[0], v);
    atomicMax(&result[1], v);
}
