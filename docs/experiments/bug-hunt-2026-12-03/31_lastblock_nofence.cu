// gpubook run 31_lastblock_nofence.cu --kernel sumall --grid 4 --block 64 --arg f32[256]:iota --arg f32[4]:zeros --arg u32[1]:zeros --arg f32[1]:zeros --mode check
// BUG: threadFenceReduction pattern with the __threadfence() omitted between writing the partial and taking the ticket
extern "C" __global__ void sumall(const float* in, float* partial, unsigned* ticket, float* out) {
    __shared__ float s[64];
    __shared__ bool amLast;
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int st = 32; st > 0; st >>= 1) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        // missing __threadfence();
        unsigned v = atomicInc(ticket, gridDim.x);
        amLast = (v == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast && t == 0) {
        float tot = 0.f;
        for (int b = 0; b < gridDim.x; ++b) tot += partial[b];
        out[0] = tot;
    }
}
