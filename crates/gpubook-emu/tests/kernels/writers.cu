// Kernels whose writers are known in advance, for tests/writers.rs.

// Thread i writes element n-1-i: a writer that were simply the element's index would be wrong.
extern "C" __global__ void reversed(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[n - 1 - i] = (float)i;
}

// Each thread writes every (gridDim.x * blockDim.x)-th element from its own index on.
extern "C" __global__ void grid_stride(int* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = i;
}

// A 2D grid of 2D blocks over a width x height image, row-major.
extern "C" __global__ void image(const int* in, int* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[y * width + x] = in[y * width + x] + 1;
}

// One byte per thread: four threads share each 4-byte word.
extern "C" __global__ void bytes(unsigned char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1;
}

// 8-byte elements: two words each.
extern "C" __global__ void doubles(double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.5 * i;
}
