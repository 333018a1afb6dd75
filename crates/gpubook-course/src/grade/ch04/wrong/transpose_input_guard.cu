// Wrong: the write is guarded with the input's sizes (copied from the read), but out is
// cols × rows. Square matrices pass; the others lose elements.
#define TILE 32
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < cols && y < rows) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
