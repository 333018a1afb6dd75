// ANCHOR: kernel
// y[r][c] = x[r][c] * scale[c] + shift[c] for n elements of rows `hidden` wide: the affine part
// of a normalisation layer, applied to a stream of token rows. One thread per element.
extern "C" __global__ void channel_affine(const float* x, float* y, const float* scale, const float* shift, int n, int hidden) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = i % hidden;
        y[i] = x[i] * scale[c] + shift[c];
    }
}
// ANCHOR_END: kernel
