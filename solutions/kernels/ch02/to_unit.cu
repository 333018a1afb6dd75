// ANCHOR: kernel
// Pixels (one byte each, 0..255) to floats in [0, 1] (four bytes each).
extern "C" __global__ void to_unit(const unsigned char* pixels, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pixels[i] / 255.0f;
}
// ANCHOR_END: kernel
