// ANCHOR: kernel
// C = A + B for rows × cols matrices stored row-major: element (row, col) lives at
// row * cols + col. One thread per element, on a 2-D grid: x runs along a row (the columns),
// y runs down the rows.
extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, int rows, int cols) {
    // TODO: this thread's column (x) and row (y); guard both; add element row * cols + col
}
// ANCHOR_END: kernel
