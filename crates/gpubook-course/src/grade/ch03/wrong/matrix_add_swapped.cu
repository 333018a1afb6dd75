// Wrong: row and column swapped (row from x, col from y) while the host's grid runs x along
// the columns. The guard keeps it in bounds, so whole regions are simply never written.
extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        int i = row * cols + col;
        c[i] = a[i] + b[i];
    }
}
