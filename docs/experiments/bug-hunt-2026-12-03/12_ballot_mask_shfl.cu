// gpubook run 12_ballot_mask_shfl.cu --kernel wsum --grid 1 --block 32 --arg f32[20]:iota --arg f32[1]:zeros --arg i32=20 --mode check
// BUG: active mask from __ballot_sync(i<n) is right, but shfl_down reads lanes off+lane that are NOT in the mask (lanes >= 20)
extern "C" __global__ void wsum(const float* in, float* out, int n) {
    int i = threadIdx.x;
    unsigned mask = __ballot_sync(0xffffffff, i < n);
    if (i < n) {
        float v = in[i];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(mask, v, off);
        if (i == 0) out[0] = v;
    }
}
