// Instrumented twins of the book's indexing patterns, for the thread-map figures: each kernel
// indexes exactly like the kernel it is named after, but instead of computing it stores, for every
// element it touches, which block and which thread got there (as linear ids). Elements nobody
// touches keep the poison the host filled them with (-1), and the figure shows them in red.

__device__ void record(int* block_of, int* thread_of, int i) {
    block_of[i] = blockIdx.y * gridDim.x + blockIdx.x;
    thread_of[i] = threadIdx.y * blockDim.x + threadIdx.x;
}

// ANCHOR: one_per_thread
// vector_add's indexing: one element per thread, guarded.
extern "C" __global__ void one_per_thread(int* block_of, int* thread_of, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cols) record(block_of, thread_of, i);
}
// ANCHOR_END: one_per_thread

// ANCHOR: grid_stride
// A grid-stride loop: a grid of any size covers any n, each thread taking every stride-th element.
extern "C" __global__ void grid_stride(int* block_of, int* thread_of, int rows, int cols) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < cols; i += stride) record(block_of, thread_of, i);
}
// ANCHOR_END: grid_stride

// ANCHOR: matrix_2d
// A 2D grid over a rows × cols matrix: x runs along a row, y down the columns.
extern "C" __global__ void matrix_2d(int* block_of, int* thread_of, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) record(block_of, thread_of, row * cols + col);
}
// ANCHOR_END: matrix_2d
