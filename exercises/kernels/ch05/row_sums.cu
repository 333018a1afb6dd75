// sums[r] = m[r][0] + m[r][1] + ... + m[r][cols - 1] for a row-major rows × cols matrix.
//
// A block of TILE × 8 threads owns TILE rows. It walks along them TILE columns at a time: the
// block stages a TILE × TILE tile of `m` in shared memory, read along the rows of `m` (each warp
// reads 32 consecutive floats), and thread (tx, 0) adds row tx of the tile into its sum. Thread
// tx of warp 0 reads tile[tx][j]: at each j the warp reads down a column of the tile.

// ANCHOR: tile
#define TILE 32  // the host launches TILE × 8 threads per block, one block per TILE rows
// ANCHOR_END: tile

// ANCHOR: kernel
extern "C" __global__ void row_sums(const float* m, float* sums, int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    // TODO: for each group of TILE columns (c0 = 0, TILE, 2 TILE, ... < cols): stage rows
    // blockIdx.x * TILE .. + TILE - 1, columns c0 .. c0 + TILE - 1 of `m` in `tile`, every warp
    // reading along a row of `m` (0.0f outside the matrix); wait for the block; thread (tx, 0)
    // adds tile[tx][0 .. TILE - 1] into its sum; wait again. Then thread (tx, 0) writes its
    // row's sum. Once the sums are right, count the banks a column of `tile` falls in.
}
// ANCHOR_END: kernel
