// @feature: a shared-memory tile with halos: a 7-point 1D stencil, zero outside the array
// @launch: stencil grid=8 block=128 f32[1000]:iota f32[1000]:uninit i32=1000
// @expect: out[i] = (max(0, i - 3) + min(n - 1, i + 3)) * (min(n - 1, i + 3) - max(0, i - 3) + 1) / 2
#define R 3
#define B 128
extern "C" __global__ void stencil(const float* in, float* out, int n) {
    __shared__ float tile[B + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    tile[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < R) {
        int left = g - R, right = g + B;
        tile[l - R] = left >= 0 && left < n ? in[left] : 0.0f;
        tile[l + B] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float s = 0.0f;
        for (int k = -R; k <= R; k++) s += tile[l + k];
        out[g] = s;
    }
}
