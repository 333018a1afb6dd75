// out = the transpose of in: in is rows × cols, out is cols × rows, both row-major, so
// out[c * rows + r] = in[r * cols + c].
//
// A naive kernel reads rows and writes columns: the writes of a warp land 4 * rows bytes apart,
// one memory transaction each. Here each block stages a TILE × TILE tile in shared memory: the
// threads of a warp read a row of the tile from `in` (consecutive addresses: coalesced), and
// after a barrier write a row of the transposed tile to `out` (coalesced again), reading a
// column of the shared tile to do it.

// ANCHOR: tile
#define TILE 32  // the host launches TILE × TILE threads per block
// ANCHOR_END: tile

// ANCHOR: kernel
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    // SOLUTION
    // ANCHOR: body
    // One spare column: without it, the 32 elements of a tile column are 32 floats apart and
    // all fall in the same shared-memory bank (a 32-way bank conflict); with it, 33 apart, and
    // they fall in 32 different banks.
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;  // column of `in`
    int y = blockIdx.y * TILE + threadIdx.y;  // row of `in`
    if (x < cols && y < rows) {
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];  // a warp reads along a row of `in`
    }
    __syncthreads();  // the tile is complete before threads read what others stored

    x = blockIdx.y * TILE + threadIdx.x;  // column of `out` (a row index of `in`)
    y = blockIdx.x * TILE + threadIdx.y;  // row of `out` (a column index of `in`)
    if (x < rows && y < cols) {           // out is cols × rows
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];  // a warp writes along a row of `out`
    }
    // ANCHOR_END: body
    // STUB
    // __shared__ float tile[TILE][TILE];  // TODO once it passes: which bank does each float of a column use?
    // // TODO: read the block's tile of `in` into `tile` (thread (tx, ty) reads in[y][x] with
    // // x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty, if inside `in`); wait for the
    // // block; then write the transposed tile: thread (tx, ty) writes out[y'][x'] with
    // // x' = blockIdx.y * TILE + tx, y' = blockIdx.x * TILE + ty, from tile[tx][ty], if inside
    // // `out` (which is cols × rows).
    // END SOLUTION
}
// ANCHOR_END: kernel
