// ANCHOR: kernel
// A box blur of a grayscale image (width × height, row-major), one thread per output pixel:
// out(row, col) is the mean of the pixels within `radius` of (row, col) in both directions,
// counting only those inside the image, so edges and corners average fewer pixels. The mean is
// integer division, as in `sum / count`.
extern "C" __global__ void blur(const unsigned char* in, unsigned char* out, int width, int height, int radius) {
    // TODO: this thread's pixel (col, row); guard it; add up the neighbours within `radius`
    // that lie inside the image, count them, and store sum / count
}
// ANCHOR_END: kernel
