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
    __shared__ float tile[TILE][TILE];  // TODO once it passes: which bank does each float of a column use?
    // TODO: read the block's tile of `in` into `tile` (thread (tx, ty) reads in[y][x] with
    // x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty, if inside `in`); wait for the
    // block; then write the transposed tile: thread (tx, ty) writes out[y'][x'] with
    // x' = blockIdx.y * TILE + tx, y' = blockIdx.x * TILE + ty, from tile[tx][ty], if inside
    // `out` (which is cols × rows).
}
// ANCHOR_END: kernel
