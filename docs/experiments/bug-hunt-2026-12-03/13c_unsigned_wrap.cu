// gpubook run 13c_unsigned_wrap.cu --kernel lap --grid 1 --block 32,4 --arg f32[128]:iota --arg f32[128]:zeros --arg i32=32 --mode check
// BUG: left neighbour index computed with unsigned arithmetic: col-1 wraps to 4294967295 for col 0 (on a 64-bit pointer: far away)
extern "C" __global__ void lap(const float* in, float* out, int w) {
    unsigned col = threadIdx.x, row = threadIdx.y;
    float left = in[row * w + col - 1];
    out[row * w + col] = in[row * w + col] - left;
}
