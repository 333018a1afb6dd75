// Two classic block scans in shared memory (PMPP chapter 11), for chapter 6's table of work and
// depth: y = the inclusive scan of each block's blockDim.x elements (a power of two, at most
// 1024), block_sums[b] = the block's total. The two-level shuffle scan is scan.cu's scan_blocks.

// ANCHOR: kogge_stone
// Kogge-Stone: log2(n) steps; at the step with distance d every element adds the one d before
// it. n log2(n) additions in all, but only log2(n) steps deep.
extern "C" __global__ void scan_kogge_stone(const unsigned* x, unsigned* y, unsigned* block_sums, int n) {
    __shared__ unsigned s[1024];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0u;
    for (int d = 1; d < blockDim.x; d *= 2) {
        __syncthreads();
        unsigned before = t >= d ? s[t - d] : 0u;
        __syncthreads();  // every thread has read before any writes
        s[t] += before;
    }
    __syncthreads();
    if (i < n) y[i] = s[t];
    if (t == blockDim.x - 1) block_sums[blockIdx.x] = s[t];
}
// ANCHOR_END: kogge_stone

// ANCHOR: brent_kung
// Brent-Kung: an up-sweep builds partial sums in a tree (n - 1 additions), a down-sweep
// hands them back down (n - 1 - log2(n) more): about 2n additions, 2 log2(n) steps deep.
extern "C" __global__ void scan_brent_kung(const unsigned* x, unsigned* y, unsigned* block_sums, int n) {
    __shared__ unsigned s[1024];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0u;
    for (int d = 1; d < blockDim.x; d *= 2) {  // up-sweep: s[k] gathers the d elements before it
        __syncthreads();
        int k = (t + 1) * 2 * d - 1;
        if (k < blockDim.x) s[k] += s[k - d];
    }
    for (int d = blockDim.x / 4; d > 0; d /= 2) {  // down-sweep: pass the sums to the gaps
        __syncthreads();
        int k = (t + 1) * 2 * d - 1;
        if (k + d < blockDim.x) s[k + d] += s[k];
    }
    __syncthreads();
    if (i < n) y[i] = s[t];
    if (t == blockDim.x - 1) block_sums[blockIdx.x] = s[t];
}
// ANCHOR_END: brent_kung
