// The kernel the copy/compute pipelines of chapters 7 and 8 stream their chunks through
// (`gpubook streams-bench`, the chapters' timelines): y = x * a + b, one thread per element.
extern "C" __global__ void scale_shift(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * a + b;
}
