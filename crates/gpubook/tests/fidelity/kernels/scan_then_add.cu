// @feature: a two-kernel algorithm on the same buffers: scan each block, scan the block sums, add
// @launch: scan_blocks grid=8 block=256 i32[2048]:iota i32[2048]:uninit i32[8]:uninit
// @launch: scan_sums grid=1 block=8 @sums
// @launch: add_offsets grid=8 block=256 @out @sums
// @expect: out[i] = i * (i + 1) / 2
// @expect: sums[i] = (256 * i + 255) * (256 * i + 256) / 2
#define B 256
// Inclusive Hillis-Steele scan of one block; the block's total into sums.
extern "C" __global__ void scan_blocks(const int* in, int* out, int* sums) {
    __shared__ int s[B];
    int t = threadIdx.x, g = blockIdx.x * B + t;
    s[t] = in[g];
    __syncthreads();
    for (int d = 1; d < B; d *= 2) {
        int add = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    out[g] = s[t];
    if (t == B - 1) sums[blockIdx.x] = s[t];
}
// Inclusive scan of the block sums, in place (one small block).
extern "C" __global__ void scan_sums(int* sums) {
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t] = sums[t];
    __syncthreads();
    for (int d = 1; d < blockDim.x; d *= 2) {
        int add = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    sums[t] = s[t];
}
// Adds the sum of every earlier block.
extern "C" __global__ void add_offsets(int* out, const int* sums) {
    if (blockIdx.x > 0) out[blockIdx.x * B + threadIdx.x] += sums[blockIdx.x - 1];
}
