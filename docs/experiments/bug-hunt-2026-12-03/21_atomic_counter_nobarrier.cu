// gpubook run 21_atomic_counter_nobarrier.cu --kernel compact --grid 1 --block 128 --arg f32[128]:random --arg f32[128]:zeros --arg i32[1]:zeros --mode check
// BUG: stream compaction: shared counter reset by thread 0 with no barrier before other threads atomicAdd on it,
// and final count read by thread 0 without a barrier after the atomics
extern "C" __global__ void compact(const float* in, float* out, int* count) {
    __shared__ int cnt;
    if (threadIdx.x == 0) cnt = 0;
    float v = in[threadIdx.x];
    if (v > 50.f) {
        int pos = atomicAdd(&cnt, 1);
        out[pos] = v;
    }
    if (threadIdx.x == 0) count[0] = cnt;
}
