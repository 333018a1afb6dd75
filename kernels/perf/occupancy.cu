// A kernel that needs many registers, for chapter 5's occupancy calculator: 32 running values a
// thread, each step using all of them, so the compiler keeps them all in registers.
extern "C" __global__ void registers_hungry(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[32];
#pragma unroll
    for (int k = 0; k < 32; k++) r[k] = x[(i + k) % n];
    for (int step = 0; step < 8; step++) {
#pragma unroll
        for (int k = 0; k < 32; k++) r[k] = fmaf(r[k], r[(k + 1) % 32], r[(k + 7) % 32]);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 32; k++) s += r[k];
    y[i] = s;
}
