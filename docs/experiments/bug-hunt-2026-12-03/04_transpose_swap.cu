// gpubook run 04_transpose_swap.cu --kernel transpose --grid 2,1 --block 32,8 --arg f32[2048]:iota --arg f32[2048]:zeros --arg i32=64 --arg i32=32 --mode check
// in is rows x cols = 32 x 64 (width 64), out is 64 x 32.
// BUG: writing the transposed element, the output index uses the input width (cols) instead of rows
#define TILE 32
extern "C" __global__ void transpose(const float* in, float* out, int cols, int rows) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // transposed block offset
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < rows && y + j < cols) out[(y + j) * cols + x] = tile[threadIdx.x][threadIdx.y + j];  // should be * rows
}
