// Kernels the API tests launch on both backends.

extern "C" __global__ void iota(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}

extern "C" __global__ void scale(const float* in, float* out, float k, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = k * in[i];
}

extern "C" __global__ void add_one(unsigned long long* data, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// A 2-D launch: out[y][x] = 1000 * y + x.
extern "C" __global__ void coords(int* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[y * width + x] = 1000 * y + x;
}

// Sums each block's values in shared memory: out[block] = sum of in[block * blockDim.x ..].
extern "C" __global__ void block_sum(const int* in, int* out) {
    extern __shared__ int partial[];
    int t = threadIdx.x;
    partial[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}

// Spins for a while so a copy on another stream has something to overlap with.
extern "C" __global__ void busy(float* data, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = data[i];
        for (int r = 0; r < rounds; r++) x = x * 0.999f + 0.001f;
        data[i] = x;
    }
}
