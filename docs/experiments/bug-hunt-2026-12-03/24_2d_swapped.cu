// gpubook run 24_2d_swapped.cu --kernel blur --grid 4,2 --block 16,16 --arg f32[2048]:iota --arg f32[2048]:zeros --arg i32=64 --arg i32=32 --mode check
// image is width 64 x height 32. BUG: row-major index built as x*width + y (x and y swapped)
extern "C" __global__ void blur(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[x * w + y] = in[x * w + y] * 0.5f;
}
