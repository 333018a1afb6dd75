// @feature: a transpose through a padded 32 x 33 shared tile (coalesced both ways, no bank conflicts)
// @launch: transpose grid=3,2 block=32,8 f32[6144]:iota f32[6144]:uninit i32=96 i32=64
// @expect: out[i] = (i % 64) * 96 + idiv(i, 64)
#define T 32
extern "C" __global__ void transpose(const float* in, float* out, int width, int height) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x;
    for (int j = threadIdx.y; j < T; j += blockDim.y) {
        int y = blockIdx.y * T + j;
        if (x < width && y < height) tile[j][threadIdx.x] = in[y * width + x];
    }
    __syncthreads();
    int ox = blockIdx.y * T + threadIdx.x; // a column of the output: a row of the input
    for (int j = threadIdx.y; j < T; j += blockDim.y) {
        int oy = blockIdx.x * T + j;
        if (ox < height && oy < width) out[oy * height + ox] = tile[threadIdx.x][j];
    }
}
