// ANCHOR: kernel
// C = A + B for rows × cols matrices stored row-major: element (row, col) lives at
// row * cols + col. One thread per element, on a 2-D grid: x runs along a row (the columns),
// y runs down the rows.
extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, int rows, int cols) {
    // SOLUTION
    // ANCHOR: body
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {  // the grid overhangs the matrix on the right and the bottom
        int i = row * cols + col;
        c[i] = a[i] + b[i];
    }
    // ANCHOR_END: body
    // STUB
    // // TODO: this thread's column (x) and row (y); guard both; add element row * cols + col
    // END SOLUTION
}
// ANCHOR_END: kernel
