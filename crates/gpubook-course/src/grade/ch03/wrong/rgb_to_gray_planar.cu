// Wrong: reads the channels as if pixel p's red byte were rgb[p] (forgetting that three bytes,
// interleaved, make one pixel).
extern "C" __global__ void rgb_to_gray(const unsigned char* rgb, unsigned char* gray, int width, int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height) {
        int pixel = row * width + col;
        float r = rgb[pixel], g = rgb[pixel + 1], b = rgb[pixel + 2];
        gray[pixel] = (unsigned char)(0.21f * r + 0.72f * g + 0.07f * b);
    }
}
