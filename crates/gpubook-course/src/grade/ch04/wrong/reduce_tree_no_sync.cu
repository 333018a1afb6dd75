// Wrong: no __syncthreads between the steps of the tree, so a thread may read
// partial[t + stride] before its owner has added into it.
extern "C" __global__ void reduce_tree(const float* x, float* block_sums, int n) {
    extern __shared__ float partial[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
    }
    if (t == 0) block_sums[blockIdx.x] = partial[0];
}
