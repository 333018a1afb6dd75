// @feature: double precision: sqrt and division on f64 buffers
// @launch: roots grid=4 block=256 f64[1000]:iota f64[1000]:uninit i32=1000
// @expect: out[i] = sqrt(i) / (i + 1)
// @tolerance: 1e-14
extern "C" __global__ void roots(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = sqrt(x[i]) / (x[i] + 1.0);
}
