// gpubook run 20_syncwarp_mask.cu --kernel rev --grid 1 --block 32 --arg f32[32]:iota --arg f32[32]:zeros --mode check
// BUG: reversal inside a warp through shared memory, __syncwarp mask names only the low half
extern "C" __global__ void rev(const float* in, float* out) {
    __shared__ float s[32];
    int l = threadIdx.x;
    s[l] = in[l];
    __syncwarp(0x0000ffff);
    out[l] = s[31 - l];
}
