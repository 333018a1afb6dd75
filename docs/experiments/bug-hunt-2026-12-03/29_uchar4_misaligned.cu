// gpubook run 29_uchar4_misaligned.cu --kernel gray --grid 1 --block 64 --arg u32[200]:iota --arg f32[64]:zeros --mode check
// BUG: RGB (3 bytes/pixel) image read as uchar4 per pixel at byte offset 3*i
extern "C" __global__ void gray(const unsigned* img, float* out) {
    const unsigned char* bytes = (const unsigned char*)img;
    int i = threadIdx.x;
    uchar4 p = *reinterpret_cast<const uchar4*>(bytes + 3 * i);
    out[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
}
