// gpubook run 39_extern_shared_alias.cu --kernel kv --grid 1 --block 64 --shared 512 --arg f32[64]:iota --arg i32[64]:iota --arg f32[64]:zeros --mode check
// BUG: two extern __shared__ arrays of different types -- both start at the SAME address (aliasing), author expected them back to back
extern "C" __global__ void kv(const float* vals, const int* keys, float* out) {
    extern __shared__ float sv[];
    extern __shared__ int sk[];
    int t = threadIdx.x;
    sv[t] = vals[t];
    sk[t] = keys[t];            // overwrites sv[t]
    __syncthreads();
    out[t] = sv[(t + 1) % 64] + (float)sk[t];
}
