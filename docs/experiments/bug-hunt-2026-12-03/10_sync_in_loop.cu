// gpubook run 10_sync_in_loop.cu --kernel rowwork --grid 1 --block 64 --arg f32[4096]:random --arg f32[64]:zeros --arg i32=64 --mode check
// BUG: __syncthreads() inside a loop whose trip count depends on the thread (triangular work)
extern "C" __global__ void rowwork(const float* in, float* out, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    float acc = 0.f;
    for (int j = 0; j <= t; ++j) {          // thread t does t+1 iterations
        buf[t] = in[t * n + j];
        __syncthreads();
        acc += buf[t];
    }
    out[t] = acc;
}
