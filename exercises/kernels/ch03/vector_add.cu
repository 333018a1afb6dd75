// ANCHOR: kernel
// ANCHOR: signature
// c[i] = a[i] + b[i]: one thread per element.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    // ANCHOR_END: signature
    // TODO: this thread's global index; guard it; add one element
}
// ANCHOR_END: kernel
