// ANCHOR: kernel
// ANCHOR: signature
// c[i] = a[i] + b[i]: one thread per element.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    // ANCHOR_END: signature
    // SOLUTION
    // ANCHOR: body
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's element
    if (i < n) {                                    // the last block may reach past the end
        c[i] = a[i] + b[i];
    }
    // ANCHOR_END: body
    // STUB
    // // TODO: this thread's global index; guard it; add one element
    // END SOLUTION
}
// ANCHOR_END: kernel
