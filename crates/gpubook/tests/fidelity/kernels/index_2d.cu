// @feature: 2D indexing: a 70 x 50 matrix covered by 32 x 16 blocks, both edges partial
// @launch: coords grid=3,4 block=32,16 i32[3500]:uninit i32=70 i32=50
// @expect: out[i] = idiv(i, 70) * 1000 + i % 70
extern "C" __global__ void coords(int* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[y * width + x] = y * 1000 + x;
}
