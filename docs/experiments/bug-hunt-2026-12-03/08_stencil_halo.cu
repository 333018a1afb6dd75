// gpubook run 08_stencil_halo.cu --kernel stencil --grid 4 --block 64 --arg f32[256]:iota --arg f32[256]:zeros --arg i32=256 --mode check
// BUG: 1D 5-point stencil (radius 2), only the LEFT halo is loaded; right halo of shared tile never written
#define R 2
#define B 64
extern "C" __global__ void stencil(const float* in, float* out, int n) {
    __shared__ float s[B + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = in[g];
    if (threadIdx.x < R) {
        s[l - R] = (g - R >= 0) ? in[g - R] : 0.f;
        // missing: s[l + B] = (g + B < n) ? in[g + B] : 0.f;
    }
    __syncthreads();
    float acc = 0.f;
    for (int k = -R; k <= R; ++k) acc += s[l + k];
    out[g] = acc;
}
