// gpubook run 41_workqueue_race.cu --kernel chunks --grid 1 --block 64 --arg f32[256]:iota --arg f32[256]:zeros --arg i32=256 --mode check
// BUG: block-wide work loop: thread 0 advances a shared cursor while other threads still read it for the loop test / index
extern "C" __global__ void chunks(const float* in, float* out, int n) {
    __shared__ int head;
    if (threadIdx.x == 0) head = 0;
    __syncthreads();
    while (head < n) {
        int i = head + threadIdx.x;
        if (i < n) out[i] = in[i] + 1.f;
        if (threadIdx.x == 0) head += blockDim.x;     // no barrier between others' reads and this write
        __syncthreads();
    }
}
