// gpubook run 13b_neg_index.cu --kernel diff --grid 1 --block 64 --arg f32[64]:iota --arg f32[64]:zeros --mode check
// BUG: backward difference without guarding i == 0: reads in[-1]
extern "C" __global__ void diff(const float* in, float* out) {
    int i = threadIdx.x;
    out[i] = in[i] - in[i - 1];
}
