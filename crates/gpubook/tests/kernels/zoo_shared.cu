// A bug of the bug zoo kept apart: NVRTC (ptxas) refuses this kernel at compile time, so on a GPU
// it would keep the whole zoo from loading; the emulator reports it when it is launched.
// Same signature as zoo.cu's kernels.

// 64 KiB of static shared memory: more than a block may use without opting in (48 KiB).
extern "C" __global__ void bug_too_much_shared(float* out, const float* in, int n) {
    __shared__ float big[16384];  // BUG: too_much_shared
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    big[threadIdx.x] = i < n ? in[i] : 0.0f;  // BUG: too_much_shared
    __syncthreads();
    if (i < n) out[i] = big[threadIdx.x];  // BUG: too_much_shared
}

