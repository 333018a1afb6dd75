// ANCHOR: kernel
// Grayscale from an RGB image, one thread per pixel on a 2-D grid. The image is width × height
// pixels, row-major, and its channels are interleaved: r, g, b of pixel 0, then of pixel 1, ...
// The gray value is the luminance 0.21 r + 0.72 g + 0.07 b, truncated to an unsigned char.
extern "C" __global__ void rgb_to_gray(const unsigned char* rgb, unsigned char* gray, int width, int height) {
    // TODO: this thread's pixel (col, row); guard it; read its three channels (they start
    // at 3 * pixel); store the weighted sum in gray[pixel]
}
// ANCHOR_END: kernel
