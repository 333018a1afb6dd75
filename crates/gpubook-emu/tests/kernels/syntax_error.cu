// A kernel with a typo on line 5.
extern "C" __global__ void broken(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = undefined_variable * 2.0f;
    }
}
