// gpubook run 28_transpose_edge.cu --kernel transpose --grid 2,2 --block 32,8 --arg f32[4096]:iota --arg f32[4096]:zeros --arg i32=64 --mode check
// BUG: BLOCK_ROWS hard-coded to 16 but the launch uses 32x8 threads: half of each shared tile is never loaded
#define TILE 32
#define BLOCK_ROWS 16
extern "C" __global__ void transpose(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
