// Fails to compile on purpose: line 5 uses a name that does not exist.

extern "C" __global__ void broken(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = undefined_name;
}
