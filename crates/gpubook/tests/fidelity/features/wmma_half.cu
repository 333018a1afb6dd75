// mma.h: one 16 x 16 x 16 tensor-core tile, __half inputs and a float accumulator, B loaded both
// row-major and column-major (the same matrix, so the same product), C filled with 1.
// launch: wmma_tile grid=1 block=32
// out: float 19
// expect: 14 7 -9 1 16 4 -12 -2 20 -2 -13 -3 19 -3 -13 -2 -2 14 0
// D = A B + 1 with A[r][c] = (r + c) % 5 - 2 and B[r][c] = (3r + c) % 7 - 3: small integers,
// exact in half and in float, so a GPU and the emulator agree bit for bit. out[0..15] is D's
// diagonal, out[16] D[0][15], out[17] D[15][0], out[18] how many elements of the column-major
// product (without the 1) differ from the row-major one's.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_tile(float* out) {
    __shared__ __align__(32) half a[16 * 16];
    __shared__ __align__(32) half b[16 * 16];
    __shared__ __align__(32) half b_cols[16 * 16];
    __shared__ __align__(32) float d[16 * 16];
    __shared__ __align__(32) float d_cols[16 * 16];
    int t = threadIdx.x;
    for (int i = t; i < 256; i += 32) {
        int r = i / 16, c = i % 16;
        a[i] = __float2half((float)((r + c) % 5 - 2));
        b[i] = __float2half((float)((r * 3 + c) % 7 - 3));
        b_cols[c * 16 + r] = b[i];
    }
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb_cols;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, plain;
    wmma::fill_fragment(acc, 1.0f);
    wmma::fill_fragment(plain, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::load_matrix_sync(fb_cols, b_cols, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::mma_sync(plain, fa, fb_cols, plain);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(d_cols, plain, 16, wmma::mem_col_major);
    __syncthreads();
    if (t != 0) return;
    for (int r = 0; r < 16; ++r) out[r] = d[r * 16 + r];
    out[16] = d[15];
    out[17] = d[15 * 16];
    int differ = 0;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) differ += d_cols[c * 16 + r] != d[r * 16 + c] - 1.0f;
    out[18] = (float)differ;
}
