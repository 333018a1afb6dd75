// gpubook run 35_pitch_bytes.cu --kernel fill --grid 1 --block 16,8 --arg f32[256]:zeros --arg i32=128 --arg i32=16 --arg i32=8 --mode check
// image 16 x 8 floats allocated with a pitch of 128 BYTES per row (cudaMallocPitch). BUG: pitch used as an element count
extern "C" __global__ void fill(float* img, int pitchBytes, int w, int h) {
    int x = threadIdx.x, y = threadIdx.y;
    if (x < w && y < h) img[y * pitchBytes + x] = 1.f;   // should be ((char*)img + y*pitchBytes) as float*
}
