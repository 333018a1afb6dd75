// Block-wise sum: each block reduces blockDim.x elements in shared memory, then one atomicAdd.
#define BLOCK 256

extern "C" __global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            partial[t] += partial[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, partial[0]);
    }
}

// The same with dynamic shared memory sized by the launch.
extern "C" __global__ void block_sum_dynamic(const float* in, float* out, int n) {
    extern __shared__ float scratch[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    scratch[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            scratch[t] += scratch[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, scratch[0]);
    }
}
