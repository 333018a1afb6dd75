// gpubook run 40_then_uninit.cu --kernel produce --grid 1 --block 64 --arg f32[64]:iota --arg f32[64]:uninit --arg i32=64 --then 'consume grid=1 block=64 @tmp f32[64]:zeros i32=64' --mode check
// BUG: producer's guard is off by one (i < n-1) so tmp[63] is never written; second launch reads all of tmp
extern "C" __global__ void produce(const float* in, float* tmp, int n) {
    int i = threadIdx.x;
    if (i < n - 1) tmp[i] = in[i] * in[i];
}
extern "C" __global__ void consume(const float* tmp, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = sqrtf(tmp[i]);
}
