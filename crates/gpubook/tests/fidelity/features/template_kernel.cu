// A block reduction whose block size is a template parameter, launched by name expression
// (`load_function("block_sum<float, 128>")`: NVRTC's nvrtcAddNameExpression on a GPU).
// launch: block_sum<float, 128> grid=2 block=128
// out: float 2
// expect: 8128 24512
// Block b sums b*128 + t for t < 128: 8128 and 24512.

template <typename T, int BLOCK>
__global__ void block_sum(T* out) {
    __shared__ T partial[BLOCK];
    int t = threadIdx.x;
    partial[t] = (T)(blockIdx.x * BLOCK + t);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
