// gpubook run 06_hist_signed_char.cu --kernel hist --grid 1 --block 64 --arg f32[64]:random --arg u32[256]:zeros --arg i32=256 --mode check
// BUG: byte histogram over a char* (signed char): bytes >= 128 give negative bin indices
extern "C" __global__ void hist(const float* words, unsigned* bins, int nbytes) {
    __shared__ unsigned local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    const char* bytes = (const char*)words;
    for (int i = threadIdx.x; i < nbytes; i += blockDim.x) {
        char c = bytes[i];
        atomicAdd(&local[c], 1u);   // c may be negative
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
