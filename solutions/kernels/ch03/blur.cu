// ANCHOR: kernel
// A box blur of a grayscale image (width × height, row-major), one thread per output pixel:
// out(row, col) is the mean of the pixels within `radius` of (row, col) in both directions,
// counting only those inside the image, so edges and corners average fewer pixels. The mean is
// integer division, as in `sum / count`.
extern "C" __global__ void blur(const unsigned char* in, unsigned char* out, int width, int height, int radius) {
    // SOLUTION
    // ANCHOR: body
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height) {
        int sum = 0, count = 0;
        for (int r = row - radius; r <= row + radius; r++) {
            for (int c = col - radius; c <= col + radius; c++) {
                if (r >= 0 && r < height && c >= 0 && c < width) {  // a neighbour inside the image
                    sum += in[r * width + c];
                    count++;
                }
            }
        }
        out[row * width + col] = (unsigned char)(sum / count);
    }
    // ANCHOR_END: body
    // STUB
    // // TODO: this thread's pixel (col, row); guard it; add up the neighbours within `radius`
    // // that lie inside the image, count them, and store sum / count
    // END SOLUTION
}
// ANCHOR_END: kernel
