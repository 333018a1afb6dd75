// ANCHOR: kernel
// counts[e] = how many of the n ids are e. The counts live in mapped host memory: every
// atomicAdd crosses the bus, which is fine for a handful of counters the host needs at once.
extern "C" __global__ void count_experts(const int* ids, int n, unsigned int* counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[ids[i]], 1u);
}
// ANCHOR_END: kernel
