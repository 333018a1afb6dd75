// @feature: __ldg read-only loads through const __restrict__ pointers
// @launch: gather grid=4 block=256 f32[1000]:iota i32[1000]:iota f32[1000]:uninit i32=1000
// @expect: out[i] = (i * 13) % 1000
extern "C" __global__ void gather(const float* __restrict__ src, const int* __restrict__ idx, float* __restrict__ out,
                                  int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(&src[(__ldg(&idx[i]) * 13) % n]);
}
