// gpubook run 13_short_index.cu --kernel scale --grid 160 --block 256 --arg f32[40960]:iota --arg i32=40960 --mode check
// BUG: index kept in a short "to save registers": wraps negative past 32767
extern "C" __global__ void scale(float* a, int n) {
    short i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= 2.f;
}
