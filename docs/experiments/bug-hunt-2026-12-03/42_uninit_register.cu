// gpubook run 42_uninit_register.cu --kernel dot8 --grid 1 --block 32 --arg f32[256]:iota --arg f32[32]:zeros --mode check
// BUG: accumulator declared without an initial value (outside the tool's stated claims: it reports uninit device/shared memory)
extern "C" __global__ void dot8(const float* in, float* out) {
    float acc;
    for (int k = 0; k < 8; ++k) acc += in[threadIdx.x * 8 + k];
    out[threadIdx.x] = acc;
}
