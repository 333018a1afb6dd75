// gpubook run 03_matmul_tile_offbyone.cu --kernel matmul --grid 3,3 --block 16,16 --arg f32[1600]:random --arg f32[1600]:random --arg f32[1600]:zeros --arg i32=40 --mode check
// BUG: tile load bound check uses <= instead of < (reads one past the row / one past the matrix)
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int ph = 0; ph < (n + TILE - 1) / TILE; ++ph) {
        int ac = ph * TILE + threadIdx.x;
        int br = ph * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row <= n && ac <= n) ? A[row * n + ac] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (br <= n && col <= n) ? B[br * n + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}
