// ANCHOR: kernel
// One step of 3-point smoothing: each element becomes the mean of itself and its two neighbours
// (the ends repeat themselves). It reads neighbours, so it cannot work in place: `in` and `out`
// must be different buffers.
extern "C" __global__ void smooth(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = in[i > 0 ? i - 1 : 0];
        float right = in[i < n - 1 ? i + 1 : n - 1];
        out[i] = (left + in[i] + right) / 3.0f;
    }
}
// ANCHOR_END: kernel
