// gpubook run 16_double_as_float.cu --kernel axpy --grid 4 --block 256 --arg f64[500]:iota --arg f64[500]:iota --arg f32=2.0 --arg i32=1000 --mode check
// BUG: host allocated n*sizeof(float) bytes (= n/2 doubles) for double buffers: kernel runs to n
extern "C" __global__ void axpy(const double* x, double* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
