// @feature: a tiled matrix product through 16 x 16 shared tiles, K not a multiple of the tile
// @launch: matmul grid=3,2 block=16,16 f32[1280]:ones f32[1920]:iota f32[1536]:uninit i32=32 i32=40 i32=48
// @expect: c[i] = 37440 + 40 * (i % 48)
#define T 16
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float as[T][T], bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float s = 0.0f;
    for (int t0 = 0; t0 < k; t0 += T) {
        as[ty][tx] = row < m && t0 + tx < k ? a[row * k + t0 + tx] : 0.0f;
        bs[ty][tx] = t0 + ty < k && col < n ? b[(t0 + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) s += as[ty][j] * bs[j][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = s;
}
