// Wrong: skips the neighbours outside the image but still divides by the full window,
// (2 radius + 1)², so edge and corner pixels come out too dark.
extern "C" __global__ void blur(const unsigned char* in, unsigned char* out, int width, int height, int radius) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height) {
        int sum = 0;
        for (int r = row - radius; r <= row + radius; r++)
            for (int c = col - radius; c <= col + radius; c++)
                if (r >= 0 && r < height && c >= 0 && c < width) sum += in[r * width + c];
        int side = 2 * radius + 1;
        out[row * width + col] = (unsigned char)(sum / (side * side));
    }
}
