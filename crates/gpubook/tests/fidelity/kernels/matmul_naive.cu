// @feature: a naive matrix product, one thread per output element (C = A B, 32 x 40 times 40 x 48)
// @launch: matmul grid=3,2 block=16,16 f32[1280]:ones f32[1920]:iota f32[1536]:uninit i32=32 i32=40 i32=48
// @expect: c[i] = 37440 + 40 * (i % 48)
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float s = 0.0f;
    for (int j = 0; j < k; j++) s += a[row * k + j] * b[j * n + col];
    c[row * n + col] = s;
}
