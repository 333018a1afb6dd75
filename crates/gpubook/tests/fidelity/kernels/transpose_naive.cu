// @feature: a naive transpose (reads coalesced, writes strided) of a 64 x 96 matrix
// @launch: transpose grid=3,2 block=32,32 f32[6144]:iota f32[6144]:uninit i32=96 i32=64
// @expect: out[i] = (i % 64) * 96 + idiv(i, 64)
extern "C" __global__ void transpose(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < width && y < height) out[x * height + y] = in[y * width + x];
}
