// ANCHOR: kernel
// c[i] = a[i] + b[i]: one thread per element.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    // SOLUTION
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
    // STUB
    // // TODO: this thread's global index; guard it; add one element
    // END SOLUTION
}
// ANCHOR_END: kernel
