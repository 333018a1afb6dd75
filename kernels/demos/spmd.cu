// Chapter 3's worked example (the exercises are vector add and its friends; this is another
// kernel with the same shape): y = a * x, one thread per element.

// ANCHOR: scale
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's element
    if (i < n) {                                    // the last block reaches past n
        y[i] = a * x[i];
    }
}
// ANCHOR_END: scale
