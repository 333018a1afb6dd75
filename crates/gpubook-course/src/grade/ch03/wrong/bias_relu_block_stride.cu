// Wrong: the loop steps by one block (blockDim.x) instead of the whole grid, so each block
// sweeps from its own start to the end and elements are updated by several blocks.
extern "C" __global__ void bias_relu(float* x, float bias, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) {
        x[i] = fmaxf(x[i] + bias, 0.0f);
    }
}
