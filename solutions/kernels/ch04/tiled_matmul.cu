// C = A × B with A of m × k, B of k × n and C of m × n, all row-major.
//
// Each block computes one TILE × TILE tile of C, one element per thread. A naive kernel reads
// a row of A and a column of B from global memory for every element of C: each input element
// is read n (or m) times. Here the block walks along k one tile at a time: it copies a tile of
// A and a tile of B into shared memory (each thread copies one element of each), waits, and
// then every thread uses TILE elements of each tile. Each element fetched from global memory
// is used TILE times.

// ANCHOR: tile
#define TILE 16  // the host launches TILE × TILE threads per block (gpubook's TILE in ch04.rs)
// ANCHOR_END: tile

// ANCHOR: kernel
extern "C" __global__ void tiled_matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float a_tile[TILE][TILE];  // A's rows of this block, TILE columns at a time
    __shared__ float b_tile[TILE][TILE];  // B's columns of this block, TILE rows at a time
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;  // this thread's row of C (and of A)
    int col = blockIdx.x * TILE + tx;  // this thread's column of C (and of B)
    float sum = 0.0f;
    // SOLUTION
    // ANCHOR: loop
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        // Load phase: one element of each tile per thread, 0 where the tile hangs over the
        // edge of A or B (zeros add nothing to the dot product).
        int a_col = t * TILE + tx;
        int b_row = t * TILE + ty;
        a_tile[ty][tx] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
        b_tile[ty][tx] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
        __syncthreads();  // both tiles are complete before anyone reads them

        // Compute phase: TILE products from shared memory.
        for (int j = 0; j < TILE; j++) {
            sum += a_tile[ty][j] * b_tile[j][tx];
        }
        __syncthreads();  // everyone is done with these tiles before the next loads overwrite them
    }
    if (row < m && col < n) {
        c[row * n + col] = sum;
    }
    // ANCHOR_END: loop
    // STUB
    // // TODO: for each tile t along k ((k + TILE - 1) / TILE of them):
    // //   - each thread loads a[row][t * TILE + tx] into a_tile[ty][tx] and b[t * TILE + ty][col]
    // //     into b_tile[ty][tx], 0.0f where the index falls outside A or B;
    // //   - wait until the whole block has loaded;
    // //   - add a_tile[ty][j] * b_tile[j][tx] for j = 0 .. TILE to sum;
    // //   - wait until the whole block is done with the tiles.
    // // Then store sum in c[row][col] if (row, col) lies inside C.
    // END SOLUTION
}
// ANCHOR_END: kernel
