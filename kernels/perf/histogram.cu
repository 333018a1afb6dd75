// Chapter 6's histograms for `gpubook perf-bench`: counts[b] = how many values equal b, for
// values in [0, bins). Both use a grid-stride loop over a grid sized to the machine; counts
// starts at zero.

// ANCHOR: global
// Every element is one atomic on global memory: values that repeat line up at the same counter.
extern "C" __global__ void histogram_global(const unsigned* values, unsigned* counts, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&counts[values[i]], 1u);
    }
}
// ANCHOR_END: global

// Privatised: each block counts into its own copy of the bins in shared memory (bins * 4 bytes
// of dynamic shared memory), then adds its copy into `counts`, one atomic per bin it saw. The
// values are read 16 bytes a lane (n a multiple of 4).
extern "C" __global__ void histogram_shared(const unsigned* values, unsigned* counts, int n4, int bins) {
    extern __shared__ unsigned local[];
    const uint4* values4 = (const uint4*)values;
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        uint4 v = values4[i];
        atomicAdd(&local[v.x], 1u);
        atomicAdd(&local[v.y], 1u);
        atomicAdd(&local[v.z], 1u);
        atomicAdd(&local[v.w], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        if (local[b] != 0) atomicAdd(&counts[b], local[b]);
    }
}
