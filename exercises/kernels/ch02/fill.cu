// ANCHOR: kernel
// out[i] = value: a whole element per thread, which a byte-wise memset cannot do.
extern "C" __global__ void fill(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
// ANCHOR_END: kernel
