// gpubook run C7_ordered_lookback.cu --kernel chained --grid 8 --block 32 --arg f32[256]:iota --arg f32[256]:zeros --arg u32[1]:zeros --arg i32[8]:zeros --arg f32[8]:zeros --mode check
// CORRECT: chained (stream) scan of block sums: dynamic block id from an atomic ticket, block k waits for block k-1's
// flag (atomic load), reads its inclusive prefix through volatile, publishes its own after a __threadfence
extern "C" __global__ void chained(const float* in, float* out, unsigned* ticket, int* flag, float* prefix) {
    __shared__ unsigned bid;
    __shared__ float carry;
    __shared__ float s[32];
    if (threadIdx.x == 0) bid = atomicAdd(ticket, 1u);
    __syncthreads();
    unsigned b = bid;
    int t = threadIdx.x;
    float v = in[b * 32 + t];
    for (int o = 1; o < 32; o <<= 1) { float n = __shfl_up_sync(0xffffffff, v, o); if (t >= o) v += n; }
    s[t] = v;
    __syncthreads();
    if (t == 0) {
        float c = 0.f;
        if (b > 0) {
            while (atomicAdd(&flag[b - 1], 0) == 0) { }
            __threadfence();
            c = ((volatile float*)prefix)[b - 1];
        }
        carry = c;
        ((volatile float*)prefix)[b] = c + s[31];
        __threadfence();
        atomicExch(&flag[b], 1);
    }
    __syncthreads();
    out[b * 32 + t] = v + carry;
}
