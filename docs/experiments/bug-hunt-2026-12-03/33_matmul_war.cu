// gpubook run 33_matmul_war.cu --kernel matmul --grid 4,4 --block 16,16 --arg f32[4096]:random --arg f32[4096]:random --arg f32[4096]:zeros --arg i32=64 --mode check
// BUG: tiled matmul missing the SECOND __syncthreads (end of phase): fast threads overwrite tiles others still read
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int ph = 0; ph < n / TILE; ++ph) {
        As[threadIdx.y][threadIdx.x] = A[row * n + ph * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(ph * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    }
    C[row * n + col] = acc;
}
