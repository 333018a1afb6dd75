// Chapter 5's kernels for `gpubook perf-bench` and the book's figures: the same work done with
// global accesses that coalesce and that do not, and with a shared tile that has bank conflicts
// and one that does not.

// ANCHOR: strided_read
// sum[t] = x[t * stride] + x[t * stride + 1] + ... (`per_thread` floats from t * stride): with
// stride = 1 a warp's loads are one run of consecutive floats, with stride = 32 every lane
// touches a sector of its own. The book's figure counts the sectors for strides 1 to 32.
extern "C" __global__ void strided_read(const float* x, float* sum, int threads, int stride, int per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    float s = 0.0f;
    for (int j = 0; j < per_thread; j++) {
        s += x[(size_t)t * stride + j];
    }
    sum[t] = s;
}
// ANCHOR_END: strided_read

// ANCHOR: gather_rows_thread
// out[r][:] = in[index[r]][:] for rows of `hidden` floats, one thread a row: at every step of
// the loop the 32 lanes of a warp touch 32 different rows, `hidden` floats apart.
extern "C" __global__ void gather_rows_thread(const float* in, const int* index, float* out, int rows,
                                              int hidden) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* src = in + (size_t)index[r] * hidden;
    for (int j = 0; j < hidden; j++) {
        out[(size_t)r * hidden + j] = src[j];
    }
}
// ANCHOR_END: gather_rows_thread

// The same, one warp a row and 16 bytes a lane (`hidden` a multiple of 4): a warp moves 512
// consecutive bytes at each step, as DeepEP moves a token's hidden vector.
extern "C" __global__ void gather_rows_warp(const float* in, const int* index, float* out, int rows,
                                            int hidden) {
    int hidden4 = hidden / 4;
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float4* src = (const float4*)in + (size_t)index[r] * hidden4;
    float4* dst = (float4*)out + (size_t)r * hidden4;
    for (int j = lane; j < hidden4; j += 32) {
        dst[j] = src[j];
    }
}

// ANCHOR: row_sums_tile
// sums[r] = the sum of row r of a rows × cols matrix. A block (32 × 8 threads) owns 32 rows:
// it stages them 32 columns at a time in a shared tile, read along rows of `m` (coalesced),
// and thread (tx, 0) then adds up row tx of the tile. PAD = 0: the 32 floats a warp reads at
// once, tile[0..32][j], are 32 floats apart, all in bank j; PAD = 1 spreads them over all 32.
template <int PAD>
__device__ void row_sums_tile(const float* m, float* sums, int rows, int cols) {
    __shared__ float tile[32][32 + PAD];
    int row0 = blockIdx.x * 32;
    float sum = 0.0f;
    for (int c0 = 0; c0 < cols; c0 += 32) {
        for (int r = threadIdx.y; r < 32; r += blockDim.y) {
            int row = row0 + r, col = c0 + threadIdx.x;
            tile[r][threadIdx.x] = row < rows && col < cols ? m[(size_t)row * cols + col] : 0.0f;
        }
        __syncthreads();
        if (threadIdx.y == 0) {
            for (int j = 0; j < 32; j++) sum += tile[threadIdx.x][j];
        }
        __syncthreads();
    }
    if (threadIdx.y == 0 && row0 + threadIdx.x < rows) sums[row0 + threadIdx.x] = sum;
}
extern "C" __global__ void row_sums_conflicts(const float* m, float* sums, int rows, int cols) {
    row_sums_tile<0>(m, sums, rows, cols);
}
extern "C" __global__ void row_sums_padded(const float* m, float* sums, int rows, int cols) {
    row_sums_tile<1>(m, sums, rows, cols);
}
// ANCHOR_END: row_sums_tile

// A shared tile read down its columns with PAD spare words a row, for the book's table of bank
// conflicts against padding: warp w reads column w of a 32 × (32 + pad) tile of floats.
extern "C" __global__ void tile_columns(float* out, int pad) {
    __shared__ float tile[32 * 40];
    int width = 32 + pad;
    for (int i = threadIdx.x; i < 32 * width; i += blockDim.x) tile[i] = (float)i;
    __syncthreads();
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    out[threadIdx.x] = tile[lane * width + warp];
}
