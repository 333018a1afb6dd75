// ANCHOR: kernel
// y = a * x + b, one thread per element.
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
// ANCHOR_END: kernel
