// Wrong: only one __syncthreads per tile. A fast thread starts loading the next tile while
// slower threads of its block are still reading the current one.
#define TILE 16
extern "C" __global__ void tiled_matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        a_tile[ty][tx] = (row < m && t * TILE + tx < k) ? a[row * k + t * TILE + tx] : 0.0f;
        b_tile[ty][tx] = (t * TILE + ty < k && col < n) ? b[(t * TILE + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) sum += a_tile[ty][j] * b_tile[j][tx];
    }
    if (row < m && col < n) c[row * n + col] = sum;
}
