// Wrong: loads whole tiles without checking the edges of A and B, as if m, k and n were
// multiples of TILE.
#define TILE 16
extern "C" __global__ void tiled_matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        a_tile[ty][tx] = a[row * k + t * TILE + tx];
        b_tile[ty][tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int j = 0; j < TILE; j++) sum += a_tile[ty][j] * b_tile[j][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}
